"""The registered guesses of the newspaper API (see :mod:`connectors.guesses`)."""

from __future__ import annotations

from connectors.guesses.model import Guess

NEWSPAPER: tuple[Guess, ...] = (
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
        other_answer="an order refused for its content is created all the same and answered with its id and "
        'the errors (the fault `processed_status` with `{"code": "0030", "with_id": true}` plays it for any '
        "order or purchase)",
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
        other_answer="an order for newspaper 8004 is kept, waiting for its cash payment, and answered 0004 "
        'without its id (the fault `service_status` "0004" answers so for any order)',
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
