// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Test only: a token that names itself as its deployer says (a listed token's symbol plus a hidden
/// character, or in look-alike letters of another script) and renames itself whenever anyone asks,
/// as a token can switch its answers on block.timestamp: the add-token dialog's probe and its add
/// read different names.
contract CopycatToken {
    string public name;
    string public symbol;
    uint8 public constant decimals = 6;

    constructor(string memory symbol_, string memory name_) {
        symbol = symbol_;
        name = name_;
    }

    function rename(string memory symbol_, string memory name_) external {
        symbol = symbol_;
        name = name_;
    }

    function balanceOf(address) external pure returns (uint256) {
        return 0;
    }
}
