"""The sandbox's delivery catalogue: logistic products (§2.6), additional services and delivery instructions
(§2.7). A realistic handful with names in the four languages; codes and barcodes are the sandbox's own.
"""

from __future__ import annotations

from typing import Any


def _name(de: str, fr: str, it: str, en: str) -> dict[str, str]:
    return {"de": de, "fr": fr, "it": it, "en": en}


ADDITIONAL_SERVICES: tuple[dict[str, Any], ...] = (
    {"code": "SI", "name": _name("Unterschrift", "Signature", "Firma", "Signature"), "barcode": "0001"},
    {
        "code": "SA",
        "name": _name(
            "Samstagzustellung", "Distribution le samedi", "Distribuzione il sabato", "Saturday delivery"
        ),
        "barcode": "0002",
    },
    {"code": "SP", "name": _name("Sperrgut", "Encombrant", "Ingombrante", "Bulky goods"), "barcode": "0003"},
    {"code": "FRA", "name": _name("Fragil", "Fragile", "Fragile", "Fragile"), "barcode": "0004"},
    {
        "code": "N",
        "name": _name("Nachnahme", "Remboursement", "Rimborso", "Cash on delivery"),
        "barcode": "0005",
    },
)

DELIVERY_INSTRUCTIONS: tuple[dict[str, Any], ...] = (
    {
        "code": "ZAW3211",
        "barcode": "3211",
        "name": _name(
            "Vor der Haustür deponieren",
            "Déposer devant la porte",
            "Depositare davanti alla porta",
            "Leave at the front door",
        ),
        "editable": False,
        "placeHolderNames": [],
        "optionNames": [],
    },
    {
        "code": "ZAW3212",
        "barcode": "3212",
        "name": _name(
            "Beim Nachbarn abgeben", "Remettre au voisin", "Consegnare al vicino", "Hand to a neighbour"
        ),
        "editable": True,
        "placeHolderNames": ["neighbourName"],
        "optionNames": [],
    },
    {
        "code": "ZAW3213",
        "barcode": "3213",
        "name": _name(
            "Am gewählten Ort deponieren",
            "Déposer à l'endroit choisi",
            "Depositare nel luogo scelto",
            "Leave at the chosen place",
        ),
        "editable": False,
        "placeHolderNames": [],
        "optionNames": ["GARAGE", "CELLAR", "LETTERBOX"],
    },
    {
        "code": "ZAW3216",
        "barcode": "3216",
        "name": _name(
            "Zustellhinweis", "Indication de distribution", "Indicazione di consegna", "Delivery note"
        ),
        "editable": True,
        "placeHolderNames": ["text"],
        "optionNames": [],
    },
    {
        "code": "ZAW3218",
        "barcode": "3218",
        "name": _name("Nicht deponieren", "Ne pas déposer", "Non depositare", "Do not leave unattended"),
        "editable": False,
        "placeHolderNames": [],
        "optionNames": [],
    },
)


def _product(
    code: str, barcode: str, instructions: tuple[str, ...], services: dict[str, bool]
) -> dict[str, Any]:
    return {
        "productCode": code,
        "barcode": barcode,
        "deliveryInstructions": [{"code": instruction} for instruction in instructions],
        "additionalServices": [
            {"code": service, "mandatory": mandatory} for service, mandatory in services.items()
        ],
    }


# Economy and priority parcels, and the same-day products of the acceptance points (§2.8).
PRODUCTS: dict[str, dict[str, Any]] = {
    product["productCode"]: product
    for product in (
        _product(
            "ECO",
            "99.60",
            ("ZAW3211", "ZAW3212", "ZAW3213", "ZAW3216"),
            {"SI": False, "SP": False, "FRA": False, "N": False},
        ),
        _product(
            "PRI",
            "99.40",
            ("ZAW3211", "ZAW3212", "ZAW3213", "ZAW3216", "ZAW3218"),
            {"SI": False, "SA": False, "SP": False, "FRA": False, "N": False},
        ),
        _product("SD1", "99.21", ("ZAW3218",), {"SI": True}),
        _product("SD2", "99.22", ("ZAW3218",), {"SI": True, "FRA": False}),
        _product("SD3", "99.23", ("ZAW3211", "ZAW3212"), {"SI": False}),
    )
}
