"""The registered guesses of the commerce API (see :mod:`connectors.guesses`)."""

from __future__ import annotations

from connectors.guesses.model import Guess

COMMERCE: tuple[Guess, ...] = (
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
        other_answer="a pickup user without a mobile number is registered, then answered 400",
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
