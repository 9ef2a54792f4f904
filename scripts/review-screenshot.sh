#!/usr/bin/env bash
# Screenshots of review.xlsx as a user sees it, for the README: docs/review/review-<page>.png.
#
# Runs the address batch of examples/address-batch.csv on the embedded sandbox (or takes the workbook
# given), converts the workbook to PDF with LibreOffice headless and the PDF's pages to PNG with pdftoppm
# (Debian: apt-get install libreoffice-calc-nogui poppler-utils).
#
#   scripts/review-screenshot.sh                      # the example batch's review.xlsx
#   scripts/review-screenshot.sh out/review.xlsx      # a review of your own
#
# Settings: VENV (default .venv), SOFFICE (default: soffice or libreoffice on the PATH), OUT (default
# docs/review), PAGES (how many pages to keep, default 5: the review and its four chart sheets), DPI
# (default 200), and the part of each page kept: WIDTH x HEIGHT pixels from its top left (2200 x 760).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
VENV=${VENV:-.venv}
PY="$VENV/bin/python"
OUT=${OUT:-docs/review}
PAGES=${PAGES:-5}
DPI=${DPI:-200}
WIDTH=${WIDTH:-2200}
HEIGHT=${HEIGHT:-760}

SOFFICE=${SOFFICE:-$(command -v soffice || command -v libreoffice || true)}
if [[ -z "$SOFFICE" ]]; then
    echo "review-screenshot: LibreOffice is not installed, so no screenshot was taken." >&2
    echo "review-screenshot: install it (Debian: apt-get install libreoffice-calc-nogui) or set SOFFICE." >&2
    exit 2
fi
if ! command -v pdftoppm >/dev/null; then
    echo "review-screenshot: pdftoppm is not installed (Debian: apt-get install poppler-utils)." >&2
    exit 2
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if [[ $# -ge 1 ]]; then
    WORKBOOK=$1
else
    if [[ ! -x "$PY" ]]; then
        echo "review-screenshot: no Python at $PY (run make install, or set VENV)" >&2
        exit 2
    fi
    export PREFECT_SERVER_ANALYTICS_ENABLED=false POSTFLOWS_DATA_DIR="$WORK/data"
    "$VENV/bin/postflows" address-batch examples/address-batch.csv --out "$WORK/out" --poll-interval 0.2 \
        >"$WORK/batch.log" 2>&1 || { cat "$WORK/batch.log" >&2; exit 1; }
    WORKBOOK="$WORK/out/review.xlsx"
fi

# A profile of its own, so that a LibreOffice the user has open is neither used nor disturbed.
"$SOFFICE" --headless "-env:UserInstallation=file://$WORK/profile" --convert-to pdf --outdir "$WORK" \
    "$WORKBOOK" >"$WORK/soffice.log" 2>&1 || { cat "$WORK/soffice.log" >&2; exit 1; }
PDF="$WORK/$(basename "${WORKBOOK%.*}").pdf"
mkdir -p "$OUT"
rm -f "$OUT"/review-*.png
pdftoppm -png -r "$DPI" -f 1 -l "$PAGES" -x 0 -y 0 -W "$WIDTH" -H "$HEIGHT" "$PDF" "$OUT/review"
ls "$OUT"/review-*.png
