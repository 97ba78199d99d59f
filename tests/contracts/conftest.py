"""The anvil fixtures (anvil_node, deployed, chain, w3, funded, deployer, send_tx) live in tests/conftest.py,
shared with tests/api."""
