// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// Merchant payments authorised by an EIP-712 signature of the payer. Anyone (the relayer)
/// may submit; funds move from `from` (who approved this contract) to `merchant`.
/// payWithPermit: the same, with the payer's EIP-2612 permit for this contract applied first in
/// the same transaction, so a payer without native coin pays (the relayer pays the gas).
/// A paymentRef is used per payer: another account paying with the same ref (e.g. from the
/// mempool) burns only its own (payer, ref), so merchants match Paid on (from, paymentRef).
contract NewblPayment2 is EIP712 {
    using SafeERC20 for IERC20;

    struct Pay {
        address merchant;
        address token;
        address from;
        uint256 amount;
        bytes32 paymentRef;
        uint48 deadline;
    }

    bytes32 public constant PAY_TYPEHASH = keccak256(
        "Pay(address merchant,address token,address from,uint256 amount,bytes32 paymentRef,uint48 deadline)"
    );

    mapping(address => mapping(bytes32 => bool)) private _used;

    event Paid(
        bytes32 indexed paymentRef,
        address indexed merchant,
        address indexed from,
        address token,
        uint256 amount
    );

    error Expired();
    error Replayed();
    error BadSigner();
    error PermitFailed();

    constructor() EIP712("NewblPayment2", "1") {}

    function pay(Pay calldata p, bytes calldata signature) external {
        _pay(p, signature);
    }

    /// permit(from, this, permitValue, permitDeadline, v, r, s) on the token, then pay. A permit
    /// that fails (already used: someone front-ran it from the mempool, or expired) is ignored
    /// when the allowance it would have given is there anyway; otherwise PermitFailed.
    function payWithPermit(
        Pay calldata p,
        bytes calldata signature,
        uint256 permitValue,
        uint256 permitDeadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        try IERC20Permit(p.token).permit(p.from, address(this), permitValue, permitDeadline, v, r, s) {}
        catch {
            if (IERC20(p.token).allowance(p.from, address(this)) < p.amount) revert PermitFailed();
        }
        _pay(p, signature);
    }

    function _pay(Pay calldata p, bytes calldata signature) private {
        if (block.timestamp > p.deadline) revert Expired();
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(hashPay(p), signature);
        if (err != ECDSA.RecoverError.NoError || signer != p.from) revert BadSigner();
        if (_used[p.from][p.paymentRef]) revert Replayed();
        _used[p.from][p.paymentRef] = true;
        IERC20(p.token).safeTransferFrom(p.from, p.merchant, p.amount);
        emit Paid(p.paymentRef, p.merchant, p.from, p.token, p.amount);
    }

    function isUsed(address from, bytes32 paymentRef) external view returns (bool) {
        return _used[from][paymentRef];
    }

    /// The EIP-712 digest the payer signs; lets clients check their encoding.
    function hashPay(Pay calldata p) public view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(abi.encode(PAY_TYPEHASH, p.merchant, p.token, p.from, p.amount, p.paymentRef, p.deadline))
        );
    }
}
