"""Solidity sources with their compile (compile.mjs) and deploy (deploy.py) scripts."""
