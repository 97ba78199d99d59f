"""ko/en texts of the assets area."""

EN: dict[str, str] = {}
KO: dict[str, str] = {}
