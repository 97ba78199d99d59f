"""ko/en texts of the payment area."""

EN: dict[str, str] = {}
KO: dict[str, str] = {}
