// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";

/// The ERC-20 interface the server calls (transfer, approve, allowance, balanceOf, name,
/// symbol, decimals): compiled only for its ABI.
interface IERC20Full is IERC20Metadata {}
