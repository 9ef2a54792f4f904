"""A flow command's options, read from the flow's request models (:mod:`flows.requests`): each field with
a command-line declaration becomes an option (or argument) with its flag, its default and its description as
the help, so the command line and the Prefect form cannot say different things.

:func:`request_command` turns a function of the filled parts into a Typer command taking those options.
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

import annotated_types
import typer
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from flows.requests.base import Cli, Part, RequestPart, cli_of, defaults_of, model_of, split_values

TAKES_HELP = {
    "pairs": " On the command line: HEADER=FIELD, repeatable.",
    "widths": " On the command line: NAME:WIDTH,NAME:WIDTH,… in column order.",
    "escaped": "",
    "date": "",
    "text": "",
    "duration": " On the command line: 7d, 12h, 30m, or a bare number of hours.",
}


def command_parameters(parts: Sequence[Part]) -> list[inspect.Parameter]:
    """The Typer parameters of ``parts``' fields that the command line offers: arguments first."""
    arguments: list[inspect.Parameter] = []
    options: list[inspect.Parameter] = []
    seen: set[str] = set()
    for part in parts:
        defaults = defaults_of(part)
        for name, info in model_of(part).model_fields.items():
            cli = cli_of(info)
            if cli is None:
                continue
            if name in seen:
                raise TypeError(f"two parts offer {name} on the command line")
            seen.add(name)
            parameter = inspect.Parameter(
                cli.argument or name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[_cli_type(info, cli), _typer_info(info, cli)],
                default=_cli_default(info, cli, defaults.get(name, inspect.Parameter.empty)),
            )
            (arguments if cli.argument else options).append(parameter)
    return arguments + options


def _cli_default(info: FieldInfo, cli: Cli, default: Any) -> Any:
    if cli.required:
        return inspect.Parameter.empty
    return None if cli.unset else default


def option_help(info: FieldInfo, cli: Cli) -> str:
    """The ``--help`` of a field: its description (the form's), with how the command line writes it."""
    return (info.description or "") + (TAKES_HELP[cli.takes] if cli.takes else "")


def _typer_info(info: FieldInfo, cli: Cli) -> Any:
    if cli.argument:
        return typer.Argument(help=option_help(info, cli), show_default=False)
    # A smallest value the part checks is checked by the command line too, with its message.
    smallest = next(
        (float(item.ge) for item in info.metadata if isinstance(item, annotated_types.Ge)),  # type: ignore[arg-type]
        None,
    )
    return typer.Option(*cli.flags, help=option_help(info, cli), show_default=not cli.unset, min=smallest)


def _cli_type(info: FieldInfo, cli: Cli) -> Any:
    if cli.takes == "pairs":
        return list[str] | None
    if cli.takes in ("widths", "escaped", "date", "text", "duration"):
        return str | None
    annotation = info.annotation
    if _list_of_choices(annotation):
        return list[str] | None  # Typer takes no list of choices: the part checks each and names the choices
    if cli.unset:
        return annotation | None  # type: ignore[operator]  # a field's type, None added
    if cli.required and annotation is not None:
        # Required on the command line: the type without the form's "not given".
        kept = [arg for arg in getattr(annotation, "__args__", ()) if arg is not type(None)]
        return kept[0] if len(kept) == 1 else annotation
    return annotation


def _list_of_choices(annotation: Any) -> bool:
    """Whether a field's type is a list of ``Literal`` choices (None allowed)."""
    kept = [arg for arg in get_args(annotation) if arg is not type(None)]
    if len(kept) != 1 or get_origin(kept[0]) is not list:
        return False
    return get_origin(get_args(kept[0])[0]) is Literal


def cli_values(parts: Sequence[Part], given: Mapping[str, Any]) -> dict[str, Any]:
    """The command line's values as field values: HEADER=FIELD pairs as a mapping, NAME:WIDTH lists as
    widths, escaped text unescaped."""
    declared = {
        cli.argument or name: (name, cli)
        for part in parts
        for name, info in model_of(part).model_fields.items()
        if (cli := cli_of(info))
    }
    values = {}
    for parameter, value in given.items():
        name, cli = declared[parameter]
        if cli.unset and value is None:
            continue  # not given: the field's default, and not set
        takes = cli.takes
        if takes == "pairs":
            value = mapping_of(value)
        elif takes == "widths":
            value = widths_of(value)
        elif takes == "escaped":
            value = unescape(value)
        elif takes == "date":
            value = day_of(value, cli.flags[0])
        elif takes == "duration":
            value = hours_of(value, cli.flags[0])
        values[name] = value
    return values


def request_command(*parts: Part) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A Typer command taking the options of ``parts``, calling the decorated function with the parts filled
    in (in the order given, as its first parameters); a value a part refuses is a usage error naming it.
    The function's further parameters are options of its own (Typer's ``Annotated`` declarations)."""

    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        hints = get_type_hints(body, include_extras=True)
        own = [
            parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[parameter.name])
            for parameter in list(inspect.signature(body).parameters.values())[len(parts) :]
        ]
        names = {parameter.name for parameter in own}

        def command(**given: Any) -> None:
            values = {name: value for name, value in given.items() if name not in names}
            try:
                filled: list[RequestPart] = split_values(parts, cli_values(parts, values))
            except ValidationError as error:
                raise usage_error(parts, error) from None
            body(*filled, **{name: value for name, value in given.items() if name in names})

        parameters = command_parameters(parts) + own
        command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        command.__name__ = body.__name__
        command.__qualname__ = body.__qualname__
        command.__doc__ = body.__doc__
        command.__module__ = body.__module__
        command.request_parts = parts  # type: ignore[attr-defined]  # what tests compare with the flow
        return command

    return decorate


def usage_error(parts: Sequence[Part], error: ValidationError) -> typer.BadParameter:
    """A value a part refused, as the command line's usage error naming its option."""
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else ""
    hint = None
    for part in parts:
        info = model_of(part).model_fields.get(name)
        cli = cli_of(info) if info is not None else None
        if cli is not None:
            hint = cli.flags[0] if cli.flags else cli.argument
    message = str(problem["msg"]).removeprefix("Value error, ")
    return typer.BadParameter(message, param_hint=hint or name)


def mapping_of(pairs: list[str] | None) -> dict[str, str] | None:
    """``HEADER=FIELD`` pairs as a header → field mapping; none as None."""
    if not pairs:
        return None
    mapping: dict[str, str] = {}
    for pair in pairs:
        header, sep, field = pair.partition("=")
        if not sep or not header.strip() or not field.strip():
            raise typer.BadParameter(f"--map expects HEADER=FIELD, got {pair!r}")
        mapping[header.strip()] = field.strip()
    return mapping


def widths_of(spec: str | None) -> dict[str, int] | None:
    """``NAME:WIDTH,…`` as column → width, in order; none as None."""
    if not spec:
        return None
    widths: dict[str, int] = {}
    for part in spec.split(","):
        name, sep, width = part.rpartition(":")
        if not sep or not name.strip() or not width.strip().isdigit() or int(width) <= 0:
            raise typer.BadParameter(f"--fixed-widths expects NAME:WIDTH,…, got {part!r}")
        widths[name.strip()] = int(width)
    return widths


def day_of(value: str | None, flag: str) -> dt.date | None:
    """A day written YYYY-MM-DD; none as None."""
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise typer.BadParameter(f"expected a date as YYYY-MM-DD, got {value!r}", param_hint=flag) from None


def hours_of(value: str, flag: str) -> float:
    """``7d``, ``12h``, ``30m`` or a bare number of hours, as hours."""
    text = value.strip().lower()
    factor = {"d": 24.0, "h": 1.0, "m": 1 / 60}.get(text[-1:])
    number = text[:-1] if factor is not None else text
    try:
        return float(number) * (factor or 1.0)
    except ValueError:
        raise typer.BadParameter(
            f"expected a duration such as 7d, 12h or 30m, got {value!r}", param_hint=flag
        ) from None


def unescape(value: str | None) -> str | None:
    r"""A separator written with escapes (``\t``) as the character."""
    return value.encode().decode("unicode_escape") if value else value
