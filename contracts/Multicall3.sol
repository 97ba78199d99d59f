// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// The subset of Multicall3 (github.com/mds1/multicall) the wallet uses, with the same
/// signatures, so the canonical deployment at 0xcA11bde05977b3631167028862bE2a173976CA11
/// can be configured on public chains instead.
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        uint256 length = calls.length;
        returnData = new Result[](length);
        for (uint256 i = 0; i < length; i++) {
            Call3 calldata c = calls[i];
            (bool ok, bytes memory ret) = c.target.call(c.callData);
            if (!ok && !c.allowFailure) {
                // Bubble up the failing call's revert data, as Multicall3 does not; simpler to debug.
                assembly {
                    revert(add(ret, 32), mload(ret))
                }
            }
            returnData[i] = Result(ok, ret);
        }
    }

    function getEthBalance(address addr) public view returns (uint256 balance) {
        balance = addr.balance;
    }

    function getChainId() public view returns (uint256 chainid) {
        chainid = block.chainid;
    }

    function getBlockNumber() public view returns (uint256 blockNumber) {
        blockNumber = block.number;
    }
}
