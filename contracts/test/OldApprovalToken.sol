// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Test only (tests/contracts/test_sign_simulation.py): an ERC-20 with the older allowance function
/// increaseApproval (OpenZeppelin 1.x), and a function of no known name that sets an allowance too.
contract OldApprovalToken {
    event Approval(address indexed owner, address indexed spender, uint256 value);

    string public constant name = "Old Approval Token";
    string public constant symbol = "OLD";
    uint8 public constant decimals = 18;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    function increaseApproval(address spender, uint256 added) external returns (bool) {
        allowance[msg.sender][spender] += added;
        emit Approval(msg.sender, spender, allowance[msg.sender][spender]);
        return true;
    }

    /// Sets the caller's allowance for `spender` to all of it, under a name no wallet decodes.
    function claimReward(address spender) external {
        allowance[msg.sender][spender] = type(uint256).max;
        emit Approval(msg.sender, spender, type(uint256).max);
    }
}
