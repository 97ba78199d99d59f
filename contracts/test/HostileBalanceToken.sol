// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Test only: a token that answers name(), symbol() and decimals() like an ERC-20 (so it can be
/// added to a list) and whose balanceOf is hostile to a batched read: mode 1 burns all the gas
/// it is given, mode 2 returns a 3 MB answer (the caller pays to copy it); mode 3's name() does;
/// mode 4 has 78 decimals (more than any uint256 amount has digits).
contract HostileBalanceToken {
    uint256 public immutable mode;

    constructor(uint256 mode_) {
        mode = mode_;
    }

    function name() external view returns (string memory) {
        if (mode == 3) {
            assembly {
                return(0, 3000000)
            }
        }
        return "Hostile";
    }

    function symbol() external pure returns (string memory) {
        return "HOST";
    }

    function decimals() external view returns (uint8) {
        return mode == 4 ? 78 : 18;
    }

    function balanceOf(address) external view returns (uint256) {
        if (mode == 1) {
            uint256 x = 1;
            while (gasleft() > 0) {
                x = x * 6364136223846793005 + 1;
            }
            return x;
        }
        assembly {
            return(0, 3000000)
        }
    }
}
