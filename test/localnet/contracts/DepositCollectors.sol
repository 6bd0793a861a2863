// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/// @dev EIP-3009 `receiveWithAuthorization`, bytes-signature form (contracts/TestUSDC.sol has it).
interface IERC3009 {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external;
}

/// @dev The ERC-20 transfer the EIP-3009 collector forwards the deposit with.
interface IERC20Transfer {
    function transfer(address to, uint256 value) external returns (bool);
}

/// @dev EIP-2612 `permit`, split signature form.
interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @dev The Permit2 call the Permit2 collector makes (contracts/Permit2.sol).
interface ISignatureTransfer {
    struct TokenPermissions {
        address token;
        uint256 amount;
    }

    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }

    struct SignatureTransferDetails {
        address to;
        uint256 requestedAmount;
    }

    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external;
}

/// @title DepositCollectorBase
/// @notice What the two deposit collectors below share, written for the x402-pay interop tests.
/// A collector moves a payer's deposit into the batch-settlement contract (contracts/BatchSettlement.sol),
/// authorized by the payer's token signature, which binds it to the channel id. Only the
/// settlement contract may call `collect`; it checks that its balance grew by the amount.
///
/// The runtime code is copied to the collectors' fixed addresses with anvil_setCode, so nothing is
/// set up by a constructor: the settlement contract's and Permit2's addresses are constants.
abstract contract DepositCollectorBase {
    /// @notice The batch-settlement contract, the only caller and the receiver of every deposit.
    address public constant SETTLEMENT = 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003;

    /// @notice `collect` was called by someone other than the settlement contract.
    error OnlySettlement();

    modifier onlySettlement() {
        if (msg.sender != SETTLEMENT) revert OnlySettlement();
        _;
    }

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
        virtual;
}

/// @title ERC3009DepositCollector
/// @notice Collects a deposit with the payer's EIP-3009 ReceiveWithAuthorization naming this
/// collector as recipient, then forwards it to the settlement contract. The authorization's nonce
/// is keccak256(abi.encode(channelId, salt)), so it is good for one channel only.
/// collectorData = abi.encode(uint256 validAfter, uint256 validBefore, uint256 salt, bytes signature).
contract ERC3009DepositCollector is DepositCollectorBase {
    error TransferFailed();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
        override
        onlySettlement
    {
        (uint256 validAfter, uint256 validBefore, uint256 salt, bytes memory signature) =
            abi.decode(collectorData, (uint256, uint256, uint256, bytes));
        bytes32 nonce = keccak256(abi.encode(channelId, salt));
        IERC3009(token).receiveWithAuthorization(
            payer, address(this), amount, validAfter, validBefore, nonce, signature
        );
        (bool ok, bytes memory result) = token.call(abi.encodeCall(IERC20Transfer.transfer, (SETTLEMENT, amount)));
        if (!ok || (result.length > 0 && !abi.decode(result, (bool)))) revert TransferFailed();
    }
}

/// @title Permit2DepositCollector
/// @notice Collects a deposit with the payer's Permit2 PermitWitnessTransferFrom naming this
/// collector as spender, with witness DepositWitness(bytes32 channelId); Permit2 moves the tokens
/// straight to the settlement contract. An EIP-2612 permit for Permit2 may come along, for a payer
/// who has not approved Permit2 yet; a failing permit is ignored (Permit2's transfer fails later
/// if there is no allowance).
/// collectorData = abi.encode(uint256 nonce, uint256 deadline, bytes permit2Signature, bytes eip2612PermitData),
/// eip2612PermitData empty or abi.encode(uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s).
contract Permit2DepositCollector is DepositCollectorBase {
    /// @notice Canonical Permit2 (the same address on every chain).
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    bytes32 public constant DEPOSIT_WITNESS_TYPEHASH = keccak256("DepositWitness(bytes32 channelId)");
    string public constant WITNESS_TYPE_STRING =
        "DepositWitness witness)DepositWitness(bytes32 channelId)TokenPermissions(address token,uint256 amount)";

    /// @notice The EIP-2612 permit's value differs from the deposit.
    error Permit2612AmountMismatch();

    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external
        override
        onlySettlement
    {
        (uint256 nonce, uint256 deadline, bytes memory signature, bytes memory permitData) =
            abi.decode(collectorData, (uint256, uint256, bytes, bytes));
        if (permitData.length > 0) _tryPermit(token, payer, amount, permitData);
        PERMIT2.permitWitnessTransferFrom(
            ISignatureTransfer.PermitTransferFrom({
                permitted: ISignatureTransfer.TokenPermissions({token: token, amount: amount}),
                nonce: nonce,
                deadline: deadline
            }),
            ISignatureTransfer.SignatureTransferDetails({to: SETTLEMENT, requestedAmount: amount}),
            payer,
            keccak256(abi.encode(DEPOSIT_WITNESS_TYPEHASH, channelId)),
            WITNESS_TYPE_STRING,
            signature
        );
    }

    function _tryPermit(address token, address payer, uint256 amount, bytes memory permitData) private {
        (uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s) =
            abi.decode(permitData, (uint256, uint256, uint8, bytes32, bytes32));
        if (value != amount) revert Permit2612AmountMismatch();
        try IERC20Permit(token).permit(payer, address(PERMIT2), value, deadline, v, r, s) {} catch {}
    }
}
