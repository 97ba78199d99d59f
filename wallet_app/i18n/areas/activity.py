"""ko/en texts of the activity area."""

EN: dict[str, str] = {}
KO: dict[str, str] = {}
