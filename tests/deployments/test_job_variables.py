"""The job variables ``postflows deploy`` writes (``env`` and the note of what it wrote) and what it keeps of
an operator's changes on the server: an ``env`` variable whose value is no longer what deploy wrote, one the
operator added or took away, and any other job variable; the rest follows the code's (the settings')."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from deployments.operators import (
    WRITTEN,
    WRITTEN_VARIABLES,
    _digest,
    job_variables,
    keep_operators_job_variables,
)


def _deployment(env: dict[str, str]) -> Any:
    return SimpleNamespace(job_variables=job_variables(env))


def test_job_variables_note_a_digest_of_each_variable_written() -> None:
    written = job_variables({"POSTFLOWS_NEWSPAPER_URL": "https://news.example"})
    assert written == {
        "env": {"POSTFLOWS_NEWSPAPER_URL": "https://news.example"},
        WRITTEN: {"POSTFLOWS_NEWSPAPER_URL": _digest("https://news.example")},
    }
    assert "news.example" not in str(written[WRITTEN])
    assert job_variables({}) == {}


def test_what_deploy_wrote_follows_the_settings() -> None:
    server = job_variables({"A": "1", "B": "2", "GONE": "x"})
    deployment = _deployment({"A": "1", "B": "3", "NEW": "n"})
    assert keep_operators_job_variables(deployment, server) == []
    assert deployment.job_variables == job_variables({"A": "1", "B": "3", "NEW": "n"})


def test_the_operators_env_variables_and_other_job_variables_stay() -> None:
    server = job_variables({"A": "1", "B": "2", "C": "3"})
    server["env"]["A"] = "changed in the UI"
    del server["env"]["B"]
    server["env"]["ADDED"] = "by the operator"
    server["working_dir"] = "/srv/other"
    deployment = _deployment({"A": "10", "B": "20", "C": "30"})
    kept = keep_operators_job_variables(deployment, server)
    assert kept == ["env A", "env ADDED", "env B", "working_dir"]
    assert deployment.job_variables["env"] == {
        "A": "changed in the UI",
        "C": "30",
        "ADDED": "by the operator",
    }
    assert deployment.job_variables["working_dir"] == "/srv/other"
    # What deploy wants stays noted: the operator's A and B are still theirs at the next deploy.
    assert deployment.job_variables[WRITTEN] == job_variables({"A": "10", "B": "20", "C": "30"})[WRITTEN]
    again = _deployment({"A": "10", "B": "20", "C": "30"})
    assert keep_operators_job_variables(again, deployment.job_variables) == kept
    assert again.job_variables == deployment.job_variables


def test_job_variables_set_before_deploy_wrote_any_are_the_operators() -> None:
    deployment = _deployment({"A": "1"})
    assert keep_operators_job_variables(deployment, {"env": {"A": "0"}}) == ["env A"]
    assert deployment.job_variables["env"] == {"A": "0"}
    served = SimpleNamespace(job_variables={})  # `postflows serve`'s deployments carry none
    assert keep_operators_job_variables(served, job_variables({"A": "1"})) == []
    assert served.job_variables == {}


def test_a_command_deploy_writes_is_noted_and_follows_the_code() -> None:
    command = "/opt/postflows/.venv/bin/python -m prefect.engine"
    written = job_variables({}, command=command)
    assert written == {"command": command, WRITTEN_VARIABLES: {"command": _digest(command)}}
    # deploy's own command is the code's at the next deploy: another one, or none
    other = SimpleNamespace(job_variables=job_variables({"A": "1"}, command="/srv/python -m prefect.engine"))
    assert keep_operators_job_variables(other, written) == []
    assert other.job_variables == job_variables({"A": "1"}, command="/srv/python -m prefect.engine")
    without = _deployment({"A": "1"})
    assert keep_operators_job_variables(without, {**written, **job_variables({"A": "1"})}) == []
    assert without.job_variables == job_variables({"A": "1"})


def test_an_operators_command_stays_and_one_taken_away_stays_away() -> None:
    ours = "/opt/postflows/.venv/bin/python -m prefect.engine"
    server = job_variables({"A": "1"}, command=ours)
    server["command"] = "/usr/local/venvs/postflows/bin/python -m prefect.engine"
    deployment = SimpleNamespace(job_variables=job_variables({"A": "1"}, command=ours))
    assert keep_operators_job_variables(deployment, server) == ["command"]
    assert deployment.job_variables["command"] == server["command"]
    again = SimpleNamespace(job_variables=job_variables({"A": "1"}, command=ours))
    assert keep_operators_job_variables(again, deployment.job_variables) == ["command"]
    assert again.job_variables == deployment.job_variables

    taken_away = job_variables({"A": "1"}, command=ours)
    del taken_away["command"]
    deployment = SimpleNamespace(job_variables=job_variables({"A": "1"}, command=ours))
    assert keep_operators_job_variables(deployment, taken_away) == ["command"]
    assert "command" not in deployment.job_variables
    set_before_deploy = {"command": ours}  # set by the operator before deploy wrote any
    deployment = _deployment({"A": "1"})
    assert keep_operators_job_variables(deployment, set_before_deploy) == ["command"]
    assert deployment.job_variables["command"] == ours
