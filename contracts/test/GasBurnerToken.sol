// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Test only: a "token" that looks payable to any dry run (huge allowance and balance) and
/// whose transferFrom burns about 20M gas, the relayer-drain attack of issue 12.
contract GasBurnerToken {
    uint256 public sink;

    function allowance(address, address) external pure returns (uint256) {
        return 2 ** 255;
    }

    function balanceOf(address) external pure returns (uint256) {
        return 2 ** 255;
    }

    function transferFrom(address, address, uint256) external returns (bool) {
        uint256 x = sink;
        unchecked {
            for (uint256 i = 0; i < 300_000; i++) {
                x = x * 6364136223846793005 + i; // no memory use: the cost grows linearly
            }
        }
        sink = x;
        return true;
    }
}
