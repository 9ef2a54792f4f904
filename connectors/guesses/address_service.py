"""The registered guesses of the address web service (see :mod:`connectors.guesses`)."""

from __future__ import annotations

from connectors.guesses.model import Guess

ADDRESS_SERVICE: tuple[Guess, ...] = (
    Guess(
        id="address-service.ping-body",
        api="address-service",
        spec='§4.1 "GET /ping | none | HTTP 200": the body is not shown',
        assumption='`{"Status": 0}`',
        otherwise="any HTTP 200 is an answer whatever its body (empty, text, JSON without Status); a JSON "
        "Status other than 0 is the service's refusal, named",
        setting="",
        other_answer="an empty HTTP 200 with a JSON content type",
        live_check="GET /ping: the status and the body's kind",
    ),
    Guess(
        id="address-service.failure-http-status",
        api="address-service",
        spec='§7 "HTTP status codes for failures: not shown"',
        assumption="a failure is HTTP 200 with its Status (101 for a wrong password)",
        otherwise="a Status is read from any answer that carries one, whatever its HTTP status; an HTTP "
        "error "
        "without a Status is an HTTP failure (401/403: sign-in refused; 5xx: retried, a submission "
        "uncertain)",
        setting="",
        other_answer="authentication failures as HTTP 401 with the Status body",
        live_check="GET /createfile: what a sign-in answers",
    ),
    Guess(
        id="address-service.query-billed",
        api="address-service",
        spec='§4.2 runquery2 answers a SettlementId; §7 105 "methods with automatic settlement": whether a '
        "query "
        "is billed is not said",
        assumption="every individual query is billed",
        otherwise="a query is sent again only after an answer that certainly means not processed; a lost "
        "answer "
        "or Status 201-203 leaves its row uncertain until `--resubmit`",
        setting="`address-query --resubmit` (per run)",
        other_answer="queries answered without a SettlementId",
    ),
    Guess(
        id="address-service.query-withclient-wrapper",
        api="address-service",
        spec='§4.2 runquery2withclient answers "same as /runquery2"',
        assumption="the answer is wrapped in `RunQuery2Result`",
        otherwise="`RunQuery2WithClientResult` is read too; any other wrapper is an unreadable answer "
        "(uncertain)",
        setting="",
        other_answer="runquery2withclient answers under `RunQuery2WithClientResult`",
    ),
    Guess(
        id="address-service.deletefile-302",
        api="address-service",
        spec='§7 302 DatabaseItemNotFound: "error accessing the database" (301 shares the meaning); '
        "deletefile answers only { Status }",
        assumption="Status 0 means deleted; 302 may be a transient database error as well as a deleted file",
        otherwise="only Status 0 deletes; any other answer leaves the file recorded as still on the service, "
        "the run says so and `postflows cleanup` asks again whatever its age",
        setting="`POSTFLOWS_ADDRESS_SERVICE_FILE_RETENTION_DAYS` (how long cleanup keeps owed files)",
        other_answer="the first deletefile of each file answers Status 302 and deletes nothing",
        live_check="GET /createfile then GET /deletefile/{token}: the Status of the deletion",
    ),
    Guess(
        id="address-service.token-status-transitions",
        api="address-service",
        spec='§3 "Transitions between the other states: not shown"',
        assumption="a job goes New or Waiting, then Running, then Finished, Failed or Canceled",
        otherwise="the job is polled until Finished (download) or Error, Failed or Canceled (ended); 7 "
        "Unknown "
        "and a TokenStatus §2.6 does not list end nothing: they are waited out, and a wait that times out "
        "leaves the job and its files for the next run, never a second runbatch",
        setting="`--max-wait` (per run)",
        other_answer="a job stays New (0) until it runs and never reports Waiting",
    ),
    Guess(
        id="address-service.download-token",
        api="address-service",
        spec="§4.1 GET /downloadfile/{token}: which token (the output file's or the batch's) is not said",
        assumption="the output file's FileToken from /createfile",
        otherwise="the output file's token is asked first; when the service finds no such item "
        "(Status 301/302) the batch token is asked; any other failure is the typed error, and the job "
        "stays recorded so a later run asks again without a second runbatch",
        setting="",
        other_answer="only the batch token downloads the output; the output file's token answers Status 302",
    ),
    Guess(
        id="address-service.output-file-layout",
        api="address-service",
        spec="§2.3 names the output fields and lengths; the output file's delimiter, encoding, header and "
        "packaging are agreed with the competence center (§1) and not shown",
        assumption="a delimited text file with a header of §2.3 names, or a ZIP of such files",
        otherwise="delimiter and encoding are detected, headers matched in any spelling; a file that cannot "
        "be "
        "read is kept as downloaded and the run fails naming it",
        setting="`POSTFLOWS_ADDRESS_SERVICE_PROFILE` (the agreed alignment)",
        other_answer="the output file delimited by tabs",
    ),
    Guess(
        id="address-service.move-file-layout",
        api="address-service",
        spec='§2.3 "The column layout of the move files: not shown"',
        assumption="the sandbox's layout: old and new address side by side under §2.3 names",
        otherwise="the move file is kept and its columns passed through as they come",
        setting="`POSTFLOWS_ADDRESS_SERVICE_PROFILE` (an alignment's `moves` output)",
        other_answer="move files whose columns carry a `New` prefix instead of a suffix",
    ),
    Guess(
        id="address-service.assistant-url",
        api="address-service",
        spec='§4.4 "The address assistant needs no contract and no test environment; its production '
        'environment is used directly"',
        assumption="the assistant lives at its own base address",
        otherwise="with a batch URL set and no assistant URL the assistant commands refuse, naming the "
        "setting",
        setting="`POSTFLOWS_ADDRESS_ASSISTANT_URL`",
        other_answer="the assistant's methods answer 404 at the batch address",
    ),
    Guess(
        id="address-service.building-verification-method",
        api="address-service",
        spec='§4.4 "Current edition: request and response shape: not shown"; the obsolete GET '
        "/buildingverification2 is shown",
        assumption="/buildingverification2 is still served",
        otherwise="a 404 ends the command naming the method and the assistant URL, never an empty result",
        setting="`POSTFLOWS_ADDRESS_ASSISTANT_URL`",
        other_answer="/buildingverification2 answers 404, as a withdrawn method would",
    ),
    Guess(
        id="address-service.pstat-values",
        api="address-service",
        spec="§4.4 PSTAT (int, postal validation status): its values are not shown",
        assumption="no meaning is known; PSTAT is shown as delivered",
        otherwise="an unknown PSTAT is printed as its number with 'meaning not configured'",
        setting="`POSTFLOWS_ADDRESS_PSTAT_MEANINGS`",
        other_answer="PSTAT 2 and 3 instead of 1 for a building that exists",
    ),
    Guess(
        id="address-service.correction-marks",
        api="address-service",
        spec="§2.5 ShortReport characters: which of them carry a value to take over is not said",
        assumption="2 (standardized), 3 (changed) and 4 (supplemented) carry a correction",
        otherwise="a changed field under any other character is listed in review.xlsx, never written back",
        setting="`POSTFLOWS_ADDRESS_SERVICE_CORRECTION_MARKS`",
        other_answer="standardized spellings marked 2 keep the value as given",
    ),
    Guess(
        id="address-service.per-minute-limits",
        api="address-service",
        spec='§8 "Maximum queries per minute (status 106) and uploaded files per minute (status 501): '
        "numbers: "
        'not shown"',
        assumption="no limit until the service answers 106 or 501",
        otherwise="106 and 501 mean not processed: the request waits for the next minute and is sent again",
        setting="`POSTFLOWS_ADDRESS_SERVICE_QUERIES_PER_MINUTE`",
        other_answer="at most 600 individual queries a minute (Status 106 beyond)",
    ),
)
