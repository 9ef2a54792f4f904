"""The register of guesses: every place where a specification shows nothing, or is ambiguous, and the code had
to choose. Each entry says what the specification says, what we assume, what the client does when a service
answers otherwise (always the safe side: uncertain rather than final, an error naming the setting rather than
"no results"), the setting that changes it, what the sandbox answers when asked for the other plausible way
(``POSTFLOWS_SANDBOX_GUESSES=other``) and what ``postflows doctor --live`` observes of it without billing.

The sandbox marks every answer it invents with the ids of the entries it plays (header
:data:`GUESS_HEADER`); it knows the ids only as text, as the other side of the wire must. The docs page
"Guesses" is generated from :data:`GUESSES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

GUESS_HEADER = "X-Sandbox-Guess"
"""The response header a sandbox answer carries: the ids of the guesses it plays, separated by commas."""

GuessApi = Literal["address-service", "newspaper", "commerce", "every API"]


@dataclass(frozen=True)
class Guess:
    """One choice the code made where a specification shows nothing.

    Attributes:
        id: stable name, ``<api>.<subject>``; the sandbox's marks and the docs use it.
        api: the API the guess is about.
        spec: where the specification speaks of it, and its words ("not shown" where it is silent).
        assumption: what we assume: what the client sends and what it reads first.
        otherwise: what the client does when a service answers otherwise.
        setting: the setting (or option) that changes the choice; "" when every plausible answer is read as
            it is and nothing needs to be set.
        other_answer: what the sandbox answers under ``POSTFLOWS_SANDBOX_GUESSES=other``.
        live_check: what ``postflows doctor --live`` sees of it without billing anything or leaving anything
            behind; "" when it cannot be observed that way.
    """

    id: str
    api: GuessApi
    spec: str
    assumption: str
    otherwise: str
    setting: str
    other_answer: str
    live_check: str = ""

    @property
    def observable(self) -> bool:
        """Whether ``postflows doctor --live`` can observe this guess without billing."""
        return bool(self.live_check)


_ADDRESS = (
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
        otherwise="the output file's token is asked; a Status answer instead of the file is the typed error, "
        "and the job stays recorded so a later run asks again without a second runbatch",
        setting="",
        other_answer="the batch token is accepted beside the output token",
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

_NEWSPAPER = (
    Guess(
        id="newspaper.error-envelope",
        api="newspaper",
        spec='§7 messages are "{ error: string, resource: null }"; "the structure of the error and warning '
        'arrays: not shown"',
        assumption='`{"errors": [{"error", "resource"}], "warnings": [...]}`',
        otherwise="`errors`/`error`/`errorMessages`, `warnings`/`warningMessages`, a `messages` array with a "
        "type, one bare message and a top-level array are all read; errors are never ignored",
        setting="",
        other_answer='`{"errorMessages": [...], "warningMessages": [...]}`',
    ),
    Guess(
        id="newspaper.code-position",
        api="newspaper",
        spec="§7 message codes are four digits; where the code stands in the message is not shown",
        assumption="the code opens the text: `0030 permitted weight range …`",
        otherwise="a §7 code is read wherever it stands, as a whole four-digit word; a message without one "
        "is "
        "an unknown refusal (uncertain)",
        setting="",
        other_answer="the code at the end of the text: `… weight range violated (code 0030)`",
    ),
    Guess(
        id="newspaper.taken-with-errors",
        api="newspaper",
        spec='§7 "An HTTP 200 response can still contain errors and warnings … 200 is not success by itself"',
        assumption="an answer with errors carries no id: nothing was taken",
        otherwise="a 2xx answer that carries an id is a taken order or purchase: the id is recorded and "
        "printed "
        "with every error and warning, and it is never posted again",
        setting="",
        other_answer="an order or purchase with a refusal is still created and answered with its id and the "
        "errors",
    ),
    Guess(
        id="newspaper.not-processed-codes",
        api="newspaper",
        spec='§7 lists the codes; which mean the request was not processed is not said; 0004 "cash payment '
        'required for this issue before processing", 0007 "issue number previously used"',
        assumption="every §7 code but 0004 and 0007 is a refusal before processing",
        otherwise="0004, 0007, a code outside §7 and any 5xx leave the submission uncertain until "
        "`--resubmit`",
        setting="`--resubmit` (per run)",
        other_answer="0004 answered without an id for an order that waits for payment",
    ),
    Guess(
        id="newspaper.refusal-http-status",
        api="newspaper",
        spec='§7 "HTTP status codes other than 200 … not shown"',
        assumption="a refusal is HTTP 400 with its §7 codes",
        otherwise="the codes decide below HTTP 500 whatever the status; 5xx is uncertain whatever its body",
        setting="",
        other_answer="refusals as HTTP 200 with the errors and no id",
    ),
    Guess(
        id="newspaper.order-statuses",
        api="newspaper",
        spec='§2.2/§3 "statusValue (LOADED and CONTROL occur). Further status values: not shown"; '
        '"Transitions: not shown"',
        assumption="an order waits in CONTROL; any other status is the one its reports reflect",
        otherwise="only CONTROL (or the statuses named) is waited out; summary and sendings are never asked "
        "in "
        "CONTROL; the daily reports sweep fetches again while a status may still change",
        setting="`newspaper-order --wait-status` (the statuses to wait in)",
        other_answer="orders go LOADED, CONTROL, then RELEASED",
    ),
    Guess(
        id="newspaper.purchase-statuses",
        api="newspaper",
        spec='§2.7 progress: "validationStatus (READY occurs) … sortingStatus (READY occurs)"; other values '
        "not shown",
        assumption="READY is done; FAILED, ERROR, CANCELED, REJECTED, ABORTED ended it",
        otherwise="any other status is waited out; a wait that times out leaves the purchase recorded for "
        "the "
        "next run, never posted again",
        setting="`--max-wait` (per run)",
        other_answer="a purchase reports IN_PROGRESS until it is READY",
    ),
    Guess(
        id="newspaper.output-addresses-path",
        api="newspaper",
        spec='§4.5 "the list spells the path output-addresses while one example spells it outputaddresses, '
        "and "
        'which spelling is accepted: not shown"',
        assumption="output-addresses",
        otherwise="the other spelling is asked after a 404 and remembered",
        setting="",
        other_answer="only outputaddresses is served",
    ),
    Guess(
        id="newspaper.purchase-id",
        api="newspaper",
        spec='§2.7 "Response: the purchase ID as a bare integer"; §4.1 gratis orders "return the order id"',
        assumption="a bare integer for purchases, `{id}` for orders",
        otherwise="a bare integer, a numeric string and `{id}`/`{orderId}`/`{purchaseId}` are read; no id is "
        "an uncertain submission",
        setting="",
        other_answer='`{"purchaseId": n}` for purchases and a bare integer for gratis orders',
    ),
    Guess(
        id="newspaper.statistics-answer",
        api="newspaper",
        spec='§2.6 "Response: a plain string confirming that the file was uploaded"',
        assumption="a text/plain body",
        otherwise="a JSON string or object is kept as received; errors in it are read as everywhere",
        setting="",
        other_answer='a JSON object `{"message": "..."}`',
    ),
    Guess(
        id="newspaper.delivery-note-shape",
        api="newspaper",
        spec='§2.8 "Fields of the responses of delivery-note, sendings, original and corrected orders, and '
        'black-list: not shown"',
        assumption="JSON carrying §2.7 document shapes",
        otherwise="PDF bytes and any JSON are read; documents are found wherever they stand, checked against "
        "their size; a body without one is kept as received",
        setting="",
        other_answer="the delivery note as application/pdf bytes",
    ),
    Guess(
        id="newspaper.document-mime",
        api="newspaper",
        spec='§2.7 document mimeType: "application/pdf and PDF occur"',
        assumption="application/pdf",
        otherwise="a bare PDF (or any unknown type) is saved with the extension its bytes show",
        setting="",
        other_answer="`PDF` as the mimeType",
    ),
    Guess(
        id="newspaper.gratis-order-body",
        api="newspaper",
        spec='§2.1 "Body of the gratis order (POST orders/gratis): not shown"',
        assumption="the standard order's shared fields, every other field the user gives kept as given",
        otherwise="a refusal names its codes; nothing is added the user did not give",
        setting="",
        other_answer="the gratis order's id as a bare integer",
    ),
    Guess(
        id="newspaper.structure-file-email-body",
        api="newspaper",
        spec='§4.5 POST structurefiles/email: "body: not shown; response: confirmation of acceptance"',
        assumption='`{"email": "<address>"}`',
        otherwise="a refusal without a §7 code ends the command naming the field's setting",
        setting="`POSTFLOWS_NEWSPAPER_STRUCTURE_FILE_EMAIL_FIELD`",
        other_answer='only `{"emailAddress": ...}` is accepted',
    ),
    Guess(
        id="newspaper.clean-up-option",
        api="newspaper",
        spec='§4.5 non-reusable addresses: "available only if the address clean-up option was chosen in the '
        "purchase\"; the option's field is not shown",
        assumption="`addressCleanUp: true` in the purchase body",
        otherwise="a missing non-reusable-addresses document is listed as not available, never as empty",
        setting="`address-purchase --clean-up` (per run)",
        other_answer="the option ignored: the document answers 404",
    ),
    Guess(
        id="newspaper.token-endpoint",
        api="newspaper",
        spec='§5 "Addresses of the authorization and token endpoints: not shown (provided at contract '
        'signing)"',
        assumption="a token URL is configured with the client",
        otherwise="no token URL with a real API URL is a configuration error naming the setting",
        setting="`POSTFLOWS_NEWSPAPER_TOKEN_URL`",
        other_answer='token errors as `{"code", "message"}` instead of RFC 6749\'s `error`',
        live_check="a client-credentials token for the configured scopes",
    ),
    Guess(
        id="newspaper.black-list-shape",
        api="newspaper",
        spec='§2.8 black-list response fields: "not shown"',
        assumption="a JSON body",
        otherwise="kept as received (JSON or text), never reshaped",
        setting="",
        other_answer="the black list as text/csv",
    ),
)

_COMMERCE = (
    Guess(
        id="commerce.error-body",
        api="commerce",
        spec='§7 "Shape of the error body and error codes of the token endpoint: not shown"',
        assumption='`{"code", "message"}`',
        otherwise="`message`, `error_description`, `detail`, `description`, `title` and an `errors` array "
        "are "
        "read; anything else is quoted, cut and scrubbed",
        setting="",
        other_answer='RFC 7807 problem details `{"type", "title", "status", "detail"}`',
    ),
    Guess(
        id="commerce.http-400-groups",
        api="commerce",
        spec="§7 lists 400 for users/current/addresses, validation, zips/streets/houses and same-day only; "
        "pickup users list 200, 403, 500; labels and return orders show nothing",
        assumption="400 means the parameters were refused before any work, where §7 lists it",
        otherwise="a 400 to pickup registration, a label or a return order is uncertain until `--resubmit`",
        setting="`--resubmit` (per run)",
        other_answer="a pickup registration with an incomplete notification is stored, then answered 400",
    ),
    Guess(
        id="commerce.same-day-path",
        api="commerce",
        spec='§4.2 "Same-day acceptance points: the request carries the JSON body of 2.8 with the GET '
        "method; "
        'its path: not shown"',
        assumption="GET /api/delivery/v1/sameday/acceptancepoints",
        otherwise='a 404 is "no results (404)" per row (§7 lists it) and the summary names the guess',
        setting="`POSTFLOWS_COMMERCE_SAME_DAY_PATH`",
        other_answer="served at /api/delivery/v1/acceptancepoints/sameday",
    ),
    Guess(
        id="commerce.pickup-points-path",
        api="commerce",
        spec='§4.3 "Retrieval of pickup points takes a JSON body … its method and path: not shown"',
        assumption="POST <pickup path>/points",
        otherwise="a 404 or 405 ends the run with exit 1 naming the setting",
        setting="`POSTFLOWS_COMMERCE_PICKUP_POINTS_PATH`, `POSTFLOWS_COMMERCE_PICKUP_POINTS_METHOD`",
        other_answer="served with GET at <pickup path>/pickuppoints",
    ),
    Guess(
        id="commerce.pickup-path",
        api="commerce",
        spec="§1 pickup sub-API at {base_url}/pickup/v1/",
        assumption="/pickup/v1 as §1 writes it",
        otherwise="a 404 ends the run with exit 1 naming the setting",
        setting="`POSTFLOWS_COMMERCE_PICKUP_PATH`",
        other_answer="the pickup sub-API at /pickpost/v1, as real answers place it",
    ),
    Guess(
        id="commerce.barcode-path",
        api="commerce",
        spec='§4.4 "Endpoints of the barcode sub-API: not shown"',
        assumption="POST /barcode/v1/addresslabels",
        otherwise="a 404 ends the run with exit 1 naming the setting; the label is not sent again",
        setting="`POSTFLOWS_COMMERCE_BARCODE_PATH`",
        other_answer="served at /barcode/v1/labels",
    ),
    Guess(
        id="commerce.return-order-path",
        api="commerce",
        spec='§4.4 "Endpoints of the return order sub-API: not shown"',
        assumption="POST /delivery/collection/order/v2/orders",
        otherwise="a 404 ends the run with exit 1 naming the setting",
        setting="`POSTFLOWS_COMMERCE_RETURN_ORDER_PATH`",
        other_answer="served at /delivery/collection/order/v2/returnorders",
    ),
    Guess(
        id="commerce.label-answer",
        api="commerce",
        spec='§2.13 "Fields of the address label resource: not shown"',
        assumption="the PDF as base64 under `item.label` (a string or an array), as public clients read it",
        otherwise="an application/pdf answer is the label; a JSON answer without a PDF at the setting's path "
        "is "
        "kept as received and the label row says 'no PDF at <path>'",
        setting="`POSTFLOWS_COMMERCE_LABEL_PDF_FIELD`",
        other_answer="the PDF under `label.content`, without an ident code",
    ),
    Guess(
        id="commerce.scopes",
        api="commerce",
        spec='§5 "Scope-to-endpoint assignment for other scopes: not shown"; DCAPI_ADDRESS_READ and '
        "DCAPI_DELIVERY occur",
        assumption="DCAPI_ADDRESS_READ for every address operation; DCAPI_PICKUP, DCAPI_BARCODE_READ, "
        "DCAPI_RETURN_ORDER for the others",
        otherwise="a 401/403 names the scope its token was asked for; nothing is sent again",
        setting="`POSTFLOWS_COMMERCE_SCOPE_*`",
        other_answer="validation needs DCAPI_ADDRESS_VALIDATE and look-ups DCAPI_ADDRESS_AUTOCOMPLETE",
        live_check="a client-credentials token for each configured non-personal scope",
    ),
    Guess(
        id="commerce.id-token-algorithm",
        api="commerce",
        spec="§5 rule 6: validate as OpenID Connect Core; the signing algorithm is not shown",
        assumption="RS256 against the issuer's JWKS",
        otherwise="an ID token signed otherwise is refused, naming the algorithm; the sign-in fails",
        setting="`POSTFLOWS_COMMERCE_JWKS_URL`, `POSTFLOWS_COMMERCE_ISSUER`",
        other_answer="discovery lists ES256 beside RS256 (tokens stay RS256)",
    ),
    Guess(
        id="commerce.address-type-spelling",
        api="commerce",
        spec='§2.1 PICKUP_POINT and LOCKER are "the names used here" for the address types',
        assumption="the names as §2.1 writes them",
        otherwise="unknown type names are kept as given (an open enum), never refused",
        setting="",
        other_answer="the types spelled as real answers spell them",
    ),
    Guess(
        id="commerce.validation-quality",
        api="commerce",
        spec='§2.3 quality: "CERTIFIED occurs; allowed values beyond it: not shown"',
        assumption="CERTIFIED is the one quality that vouches for the address",
        otherwise="any other quality is reported as delivered and never counted as certified",
        setting="",
        other_answer="qualities spelled in lower case",
    ),
    Guess(
        id="commerce.expires-format",
        api="commerce",
        spec="§2.3 expires: compact ISO 8601 yyyymmddThhmmss with a numeric UTC offset",
        assumption="the compact form",
        otherwise="the extended ISO 8601 form is read too; anything else is kept empty, not a failure",
        setting="",
        other_answer="expires in extended ISO 8601 (2026-11-29T10:00:00+01:00)",
    ),
    Guess(
        id="commerce.house-number-format",
        api="commerce",
        spec='§2.4 houses: "house number with optional letter, e.g. number and suffix separated by a space"',
        assumption="`12 a`: the number, a space, the letter",
        otherwise="numbers are shown as delivered; a look-up matches with and without the space",
        setting="",
        other_answer="`12a` without the space",
    ),
    Guess(
        id="commerce.zips-probe",
        api="commerce",
        spec="§4.1 GET /address/v1/zips?zipCity= (partial zip or city); §7 404 no results",
        assumption="a known postcode answers 200 with its towns",
        otherwise="a 404 for a known postcode is 'no results', reported as such",
        setting="`POSTFLOWS_COMMERCE_ADDRESS_PATH`",
        other_answer="towns in `city27` only, `city18` empty",
        live_check="GET /address/v1/zips?zipCity=8001",
    ),
)

_EVERY_API = (
    Guess(
        id="http.429-not-processed",
        api="every API",
        spec='Rate limits: "not shown" in all three specifications',
        assumption="HTTP 429 comes from a rate limiter in front of the service, before any work (RFC 6585)",
        otherwise="429 is retried after Retry-After and a submission sent again",
        setting="`POSTFLOWS_HTTP_429_NOT_PROCESSED`",
        other_answer="429 without Retry-After",
    ),
)

GUESSES: tuple[Guess, ...] = (*_ADDRESS, *_NEWSPAPER, *_COMMERCE, *_EVERY_API)
"""Every registered guess, by API."""

BY_ID: Mapping[str, Guess] = MappingProxyType({guess.id: guess for guess in GUESSES})


def guess(guess_id: str) -> Guess:
    """The registered guess ``guess_id``.

    Raises:
        KeyError: no guess of that id is registered.
    """
    return BY_ID[guess_id]
