"""Pictures written beside a run's markdown summary: a horizontal bar chart as a PNG, drawn with Pillow
(a picture of rectangles and text: a run's process loads Pillow's few modules, not a plotting library),
written atomically. The number of bars is bounded, so a picture costs the same whatever the run's size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fileio.files import atomic_path

if TYPE_CHECKING:
    from PIL.ImageDraw import ImageDraw
    from PIL.ImageFont import FreeTypeFont, ImageFont

MAX_BARS = 30
_BAR_COLOR = "#4472C4"
_INK = "#262626"
_AXIS = "#808080"
_WIDTH = 800
_ROW = 32  # one bar's band
_TOP = 56  # the title's band
_BOTTOM = 64  # the value axis: its ticks, their numbers and its label
_MARGIN = 16
_MAX_TICKS = 6


def write_bar_chart(
    path: Path, labels: Sequence[str], values: Sequence[float], *, title: str, value_label: str = ""
) -> Path:
    """Draw one horizontal bar per label, in the given order from the top, each with its value at its end,
    on a value axis from 0 with whole-numbered ticks, and write the PNG at ``path`` (800 pixels wide, 32 a
    bar).

    Raises:
        ValueError: more than :data:`MAX_BARS` bars, or labels and values of different lengths.
    """
    if len(labels) != len(values):
        raise ValueError(f"{len(labels)} labels for {len(values)} values")
    if len(labels) > MAX_BARS:
        raise ValueError(f"{len(labels)} bars; a picture holds at most {MAX_BARS}")
    from PIL import Image, ImageDraw, ImageFont

    names = [str(label) for label in labels]
    image = Image.new("RGB", (_WIDTH, _TOP + _ROW * max(len(names), 1) + _BOTTOM), "white")
    draw = ImageDraw.Draw(image)
    text, small = ImageFont.load_default(size=13), ImageFont.load_default(size=11)
    draw.text((_WIDTH / 2, _TOP / 2), title, font=ImageFont.load_default(size=15), fill=_INK, anchor="mm")
    left = _MARGIN + min(max((draw.textlength(name, font=text) for name in names), default=0), _WIDTH * 0.4)
    plot = (left + 8, _WIDTH - _MARGIN)
    top, bottom = _TOP, _TOP + _ROW * max(len(names), 1)
    ticks = _ticks(max(values, default=0))
    scale = (plot[1] - plot[0]) / (ticks[-1] * 1.12 or 1)  # room after the longest bar for its number
    for row, (name, value) in enumerate(zip(names, values, strict=True)):
        middle = top + _ROW * row + _ROW / 2
        draw.text((left, middle), name, font=text, fill=_INK, anchor="rm")
        end = plot[0] + max(value, 0) * scale
        if value > 0:
            draw.rectangle((plot[0], middle - _ROW * 0.4, end, middle + _ROW * 0.4), fill=_BAR_COLOR)
        draw.text((end + 3, middle), f"{value:,g}", font=small, fill=_INK, anchor="lm")
    _value_axis(draw, plot, (top, bottom), ticks, scale, (small, text), value_label)
    with atomic_path(path) as temporary:
        image.save(temporary, format="PNG", optimize=False)
    return path


def _ticks(largest: float) -> list[float]:
    """Whole-numbered ticks from 0 to at least ``largest``, a step of 1, 2 or 5 times a power of ten, at most
    :data:`_MAX_TICKS` of them past 0."""
    if largest <= 0:
        return [0.0, 1.0]
    raw = largest / _MAX_TICKS
    power = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next((factor * power for factor in (1, 2, 5, 10) if factor * power >= raw), 10 * power)
    return [float(step * index) for index in range(math.ceil(largest / step) + 1)]


def _value_axis(
    draw: ImageDraw,
    plot: tuple[float, float],
    rows: tuple[float, float],
    ticks: list[float],
    scale: float,
    fonts: tuple[FreeTypeFont | ImageFont, FreeTypeFont | ImageFont],
    label: str,
) -> None:
    """The bars' axis line, the value axis under them with its ticks and numbers, and its ``label``."""
    top, bottom = rows
    draw.line((plot[0], top, plot[0], bottom), fill=_AXIS)
    draw.line((plot[0], bottom, plot[1], bottom), fill=_AXIS)
    for tick in ticks:
        x = plot[0] + tick * scale
        draw.line((x, bottom, x, bottom + 4), fill=_AXIS)
        draw.text((x, bottom + 6), f"{tick:,g}", font=fonts[0], fill=_INK, anchor="ma")
    if label:
        draw.text(((plot[0] + plot[1]) / 2, bottom + 40), label, font=fonts[1], fill=_INK, anchor="ma")
