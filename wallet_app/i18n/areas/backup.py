"""ko/en texts of the backup area."""

EN: dict[str, str] = {}
KO: dict[str, str] = {}
