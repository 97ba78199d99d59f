// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Test only (tests/contracts/test_sign_simulation.py): pays back twice the value it is sent only in
/// a block it takes for eth_simulateV1's, by the block fields a contract can read.
contract SimulationTell {
    uint256 public marked; // the prevrandao of the block mark() was mined in

    function mark() external {
        marked = block.prevrandao;
    }

    /// When prevrandao is 0 (geth's simulated block) or the marked one (anvil's simulated block has
    /// the latest block's).
    function claimByRandao() external payable {
        if (block.prevrandao == 0 || block.prevrandao == marked) _payBack();
    }

    /// When the block's number is not after `latest`, the latest block's when the link was made
    /// (anvil simulates at the latest block's number; a transaction is mined after it).
    function claimByNumber(uint256 latest) external payable {
        if (block.number <= latest) _payBack();
    }

    function _payBack() private {
        uint256 back = msg.value * 2 > address(this).balance ? address(this).balance : msg.value * 2;
        (bool sent,) = msg.sender.call{value: back}("");
        require(sent);
    }

    receive() external payable {}
}
