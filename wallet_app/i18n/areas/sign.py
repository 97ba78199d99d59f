"""ko/en texts of the sign area."""

EN: dict[str, str] = {}
KO: dict[str, str] = {}
