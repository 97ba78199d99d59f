"""What a person typed or pasted into a form field, as the parsers read it (pure functions,
table-tested). Nothing visible changes meaning: only what the person could not see or tell apart.

plain(" ０ｘＡＢ\u200b12 ") == " 0xAB12 "
    Zero-width characters (U+200B..200D, U+2060, U+FEFF, the soft hyphen U+00AD) removed: copied
    from chat apps and web pages they sit invisibly in an address or an amount, which looked right
    and was refused as malformed. Full-width ASCII (U+FF01..FF5E: an East Asian IME's full-width
    mode, Korean's Shift+Space) as ASCII, and the ideographic space U+3000 as a space: "１２．５" is
    12.5. Anything else is kept for the parser to refuse: the full-width comma is a comma (amounts
    take no grouping), other scripts' digits and look-alike letters are not ASCII, and bidi
    controls (U+200E/200F, U+202A..202E, U+2066..2069) stay, so that an address holding one is
    refused: they can show characters in another order than they are.

address(" 0XAB… ") == "0xAB…"
    plain(), trimmed, and a capital 0X prefix as 0x (an address written all in capitals, as
    alphanumeric QR codes carry it). The result goes to eth.parse_address, which checks it.
"""

from __future__ import annotations

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_TABLE = {ord(c): None for c in ZERO_WIDTH} | {0x3000: " "} | {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}


def plain(text: str) -> str:
    return text.translate(_TABLE)


def address(text: str) -> str:
    value = plain(text).strip()
    return "0x" + value[2:] if value.startswith("0X") else value
