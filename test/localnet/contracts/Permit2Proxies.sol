// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/// @dev The Permit2 call the proxies make (contracts/Permit2.sol).
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

/// @dev EIP-2612 `permit`, split signature form.
interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// @title Permit2ProxyBase
/// @notice What the two x402 Permit2 proxies below share, written for the x402-pay interop tests.
/// A proxy is the spender a buyer names in a Permit2 signature. The buyer's witness fixes the
/// payee (and, for upto, the facilitator), so whoever submits the transaction cannot send the
/// money anywhere else.
///
/// The runtime code is copied to the proxies' fixed addresses with anvil_setCode, so nothing is
/// set up by a constructor: Permit2's address is a constant, the reentrancy lock is transient.
abstract contract Permit2ProxyBase {
    /// @notice Canonical Permit2 (the same address on every chain).
    ISignatureTransfer public constant PERMIT2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    /// @notice An EIP-2612 permit letting Permit2 spend the buyer's tokens, for a buyer who has
    /// not approved Permit2 yet.
    struct EIP2612Permit {
        uint256 value;
        uint256 deadline;
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    /// @notice A payment was settled by `settle`.
    event Settled();
    /// @notice A payment was settled by `settleWithPermit`.
    event SettledWithPermit();

    /// @notice The amount to move is zero (it would only burn the nonce).
    error InvalidAmount();
    /// @notice The witness names no payee.
    error InvalidDestination();
    /// @notice No owner (payer) was given.
    error InvalidOwner();
    /// @notice Nothing is deployed at the Permit2 address.
    error InvalidPermit2Address();
    /// @notice The witness's `validAfter` is still in the future.
    error PaymentTooEarly();
    /// @notice The EIP-2612 permit's value differs from the Permit2 permitted amount.
    error Permit2612AmountMismatch();
    /// @notice A settlement called back into the proxy.
    error ReentrancyGuardReentrantCall();

    bool private transient locked;

    modifier nonReentrant() {
        if (locked) revert ReentrancyGuardReentrantCall();
        locked = true;
        _;
        locked = false;
    }

    /// @dev The checks every settlement makes before it calls Permit2.
    function _checkPayment(uint256 amount, address owner, address to, uint256 validAfter) internal view {
        if (amount == 0) revert InvalidAmount();
        if (owner == address(0)) revert InvalidOwner();
        if (to == address(0)) revert InvalidDestination();
        if (block.timestamp < validAfter) revert PaymentTooEarly();
    }

    /// @dev Submits the buyer's EIP-2612 permit for Permit2. Its value must be the permitted amount.
    /// A failing permit is ignored: the buyer may have approved Permit2 already (or someone
    /// submitted this very permit first); Permit2's transfer fails later if no allowance exists.
    function _tryPermit(address token, address owner, EIP2612Permit calldata permit2612, uint256 permitted) internal {
        if (permit2612.value != permitted) revert Permit2612AmountMismatch();
        if (token.code.length == 0) return;
        try IERC20Permit(token).permit(
            owner, address(PERMIT2), permit2612.value, permit2612.deadline, permit2612.v, permit2612.r, permit2612.s
        ) {} catch {}
    }

    /// @dev Has Permit2 move `amount` from `owner` to `to`, checking the signature over `witnessHash`.
    function _transfer(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        address to,
        uint256 amount,
        bytes32 witnessHash,
        string memory witnessTypeString,
        bytes calldata signature
    ) internal {
        if (address(PERMIT2).code.length == 0) revert InvalidPermit2Address();
        PERMIT2.permitWitnessTransferFrom(
            permit,
            ISignatureTransfer.SignatureTransferDetails({to: to, requestedAmount: amount}),
            owner,
            witnessHash,
            witnessTypeString,
            signature
        );
    }
}

/// @title x402ExactPermit2Proxy
/// @notice x402 `exact` through Permit2: moves exactly the permitted amount to the witness's payee.
/// Anyone may submit the transaction; the buyer's signature decides everything that matters.
contract x402ExactPermit2Proxy is Permit2ProxyBase {
    /// @notice The buyer's witness: the payee and the earliest settlement time.
    struct Witness {
        address to;
        uint256 validAfter;
    }

    /// @notice The end of the signed type string that Permit2 completes (types sorted by name).
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,uint256 validAfter)");

    /// @notice Settles a payment from a buyer who has approved Permit2.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, owner, witness, signature);
        emit Settled();
    }

    /// @notice Settles a payment after submitting the buyer's EIP-2612 permit for Permit2.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _tryPermit(permit.permitted.token, owner, permit2612, permit.permitted.amount);
        _settle(permit, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        uint256 amount = permit.permitted.amount;
        _checkPayment(amount, owner, witness.to, witness.validAfter);
        bytes32 witnessHash = keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.validAfter));
        _transfer(permit, owner, witness.to, amount, witnessHash, WITNESS_TYPE_STRING, signature);
    }
}

/// @title x402UptoPermit2Proxy
/// @notice x402 `upto` through Permit2: the buyer signs for a maximum; the facilitator the buyer
/// named in the witness, and only it, settles any amount from 1 up to that maximum.
contract x402UptoPermit2Proxy is Permit2ProxyBase {
    /// @notice The buyer's witness: the payee, the one facilitator allowed to settle, and the
    /// earliest settlement time.
    struct Witness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    /// @notice The end of the signed type string that Permit2 completes (types sorted by name).
    string public constant WITNESS_TYPE_STRING =
        "Witness witness)TokenPermissions(address token,uint256 amount)Witness(address to,address facilitator,uint256 validAfter)";
    bytes32 public constant WITNESS_TYPEHASH = keccak256("Witness(address to,address facilitator,uint256 validAfter)");

    /// @notice The amount to settle is above what the buyer signed for.
    error AmountExceedsPermitted();
    /// @notice The caller is not the facilitator the buyer named.
    error UnauthorizedFacilitator();

    /// @notice Settles `amount` (at most the permitted amount) from a buyer who has approved Permit2.
    function settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _settle(permit, amount, owner, witness, signature);
        emit Settled();
    }

    /// @notice Settles `amount` after submitting the buyer's EIP-2612 permit for Permit2. The
    /// permit's value must be the permitted maximum, not `amount`.
    function settleWithPermit(
        EIP2612Permit calldata permit2612,
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) external nonReentrant {
        _tryPermit(permit.permitted.token, owner, permit2612, permit.permitted.amount);
        _settle(permit, amount, owner, witness, signature);
        emit SettledWithPermit();
    }

    function _settle(
        ISignatureTransfer.PermitTransferFrom calldata permit,
        uint256 amount,
        address owner,
        Witness calldata witness,
        bytes calldata signature
    ) private {
        if (amount > permit.permitted.amount) revert AmountExceedsPermitted();
        if (msg.sender != witness.facilitator) revert UnauthorizedFacilitator();
        _checkPayment(amount, owner, witness.to, witness.validAfter);
        bytes32 witnessHash =
            keccak256(abi.encode(WITNESS_TYPEHASH, witness.to, witness.facilitator, witness.validAfter));
        _transfer(permit, owner, witness.to, amount, witnessHash, WITNESS_TYPE_STRING, signature);
    }
}
