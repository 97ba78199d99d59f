"""services.indexer.watch_list on the test database (SQLite; PostgreSQL with TEST_DATABASE=pg): the
users' addresses, and only the tokens users added; the chain's tokens and native coin, seeded into
every list, come from the chains file."""

from wallet_app import crud
from wallet_app.core.db import get_session
from wallet_app.models import stored_id
from wallet_app.services import indexer
from wallet_app.services.eth import ZERO_ADDRESS

from .test_indexer import ALICE, CHAIN, OTHER_TOKEN, TOKEN


def test_the_seeded_tokens_are_not_read_per_user_and_still_found(db):
    with get_session() as s:
        user = crud.add_user(s, "sub-1", "a@example.com", "en")
        user.address, uid = ALICE, stored_id(user)
        for token, symbol in ((TOKEN, "tUSD"), (ZERO_ADDRESS, "ETH"), (OTHER_TOKEN, "OTH")):
            crud.add_user_token(s, uid, CHAIN.chain_id, token, symbol, symbol, 6)
        s.commit()
        watch = indexer.watch_list(s, CHAIN)
    assert watch.users == {ALICE: [uid]}
    assert watch.holdings == {OTHER_TOKEN: {uid: ("OTH", 6)}}  # what the user added, alone
    assert watch.tokens == sorted([TOKEN, OTHER_TOKEN])
    assert watch.token_of(TOKEN, uid) == ("tUSD", 6)  # from the chains file
    assert watch.token_of(OTHER_TOKEN, uid) == ("OTH", 6)
    assert watch.token_of(OTHER_TOKEN, uid + 1) is None
