"""Per-area catalogues (one module per page area, each with EN and KO dicts), merged into
the main catalogues by wallet_app/i18n/__init__.py. Keys must be unique across modules."""
