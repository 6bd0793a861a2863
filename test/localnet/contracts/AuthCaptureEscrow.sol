// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/// @dev The ERC-20 calls the escrow and the collectors make.
interface IERC20 {
    function balanceOf(address owner) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

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

/// @dev Permit2's signature transfer without a witness (contracts/Permit2.sol).
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

    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external;
}

/// @dev Token transfers that accept tokens returning nothing, and pass a token's revert on.
library SafeTransfer {
    error TransferFailed();

    function send(address token, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.transfer, (to, amount)));
    }

    function pull(address token, address from, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.transferFrom, (from, to, amount)));
    }

    function _call(address token, bytes memory data) private {
        if (token.code.length == 0) revert TransferFailed();
        (bool ok, bytes memory result) = token.call(data);
        if (!ok) {
            assembly {
                revert(add(result, 0x20), mload(result))
            }
        }
        if (result.length > 0 && !abi.decode(result, (bool))) revert TransferFailed();
    }
}

/// @title AuthCaptureEscrow
/// @notice A stand-in for commerce-payments' AuthCaptureEscrow v1.1 on a local test chain, written for
/// the x402-pay interop tests, with the function names, arguments, events, errors and views the
/// reference `auth-capture` scheme uses (v1.1: `charge` and `capture` take an absolute fee amount).
///
/// A payment is identified by its PaymentInfo; `getHash` binds it to this chain and address. The
/// operator `authorize`s (holds up to maxAmount in escrow, collected by a token collector with the
/// payer's signature), `capture`s parts of the hold to the receiver less a fee, `void`s the rest back
/// to the payer, and `refund`s captured amounts before `refundExpiry`, with funds a refund collector
/// brings in. `charge` is authorize and capture at once. The payer `reclaim`s a hold left past
/// `authorizationExpiry`.
///
/// Simplified: there is no token store per operator; the escrow holds every hold itself, and
/// `getTokenStore(operator)` answers its own address. The balance check of each collection is kept:
/// the escrow's balance must grow by exactly the amount. ERC-6492 signatures are not unwrapped.
///
/// The runtime code is copied to 0xf96815976523E00e65Be8f34cA5e64b4f41EB19c with anvil_setCode,
/// so no constructor runs; the reentrancy lock is transient.
contract AuthCaptureEscrow {
    struct PaymentInfo {
        address operator;
        address payer;
        address receiver;
        address token;
        uint120 maxAmount;
        uint48 preApprovalExpiry;
        uint48 authorizationExpiry;
        uint48 refundExpiry;
        uint16 minFeeBps;
        uint16 maxFeeBps;
        address feeReceiver;
        uint256 salt;
    }

    struct PaymentState {
        bool hasCollectedPayment;
        uint120 capturableAmount;
        uint120 refundableAmount;
    }

    bytes32 public constant PAYMENT_INFO_TYPEHASH = keccak256(
        "PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount,"
        "uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps,"
        "uint16 maxFeeBps,address feeReceiver,uint256 salt)"
    );

    uint16 internal constant MAX_FEE_BPS = 10_000;

    mapping(bytes32 paymentInfoHash => PaymentState) public paymentState;

    bool private transient locked;

    event PaymentCharged(
        bytes32 indexed paymentInfoHash,
        PaymentInfo paymentInfo,
        uint256 amount,
        address tokenCollector,
        uint256 feeAmount,
        address feeReceiver
    );
    event PaymentAuthorized(
        bytes32 indexed paymentInfoHash, PaymentInfo paymentInfo, uint256 amount, address tokenCollector
    );
    event PaymentCaptured(bytes32 indexed paymentInfoHash, uint256 amount, uint256 feeAmount, address feeReceiver);
    event PaymentVoided(bytes32 indexed paymentInfoHash, uint256 amount);
    event PaymentReclaimed(bytes32 indexed paymentInfoHash, uint256 amount);
    event PaymentRefunded(bytes32 indexed paymentInfoHash, uint256 amount, address tokenCollector);

    error InvalidSender(address sender, address expected);
    error ZeroAmount();
    error AmountOverflow(uint256 amount, uint256 limit);
    error ExceedsMaxAmount(uint256 amount, uint256 maxAmount);
    error AfterPreApprovalExpiry(uint48 timestamp, uint48 expiry);
    error InvalidExpiries(uint48 preApproval, uint48 authorization, uint48 refund);
    error FeeBpsOverflow(uint16 feeBps);
    error InvalidFeeBpsRange(uint16 minFeeBps, uint16 maxFeeBps);
    error FeeAmountOutOfRange(uint256 feeAmount, uint256 minFee, uint256 maxFee);
    error ZeroFeeReceiver();
    error InvalidFeeReceiver(address attempted, address expected);
    error InvalidCollectorForOperation();
    error TokenCollectionFailed();
    error PaymentAlreadyCollected(bytes32 paymentInfoHash);
    error AfterAuthorizationExpiry(uint48 timestamp, uint48 expiry);
    error InsufficientAuthorization(bytes32 paymentInfoHash, uint256 authorizedAmount, uint256 requestedAmount);
    error ZeroAuthorization(bytes32 paymentInfoHash);
    error BeforeAuthorizationExpiry(uint48 timestamp, uint48 expiry);
    error AfterRefundExpiry(uint48 timestamp, uint48 expiry);
    error RefundExceedsCapture(uint256 refund, uint256 captured);
    error Reentrancy();

    modifier nonReentrant() {
        if (locked) revert Reentrancy();
        locked = true;
        _;
        locked = false;
    }

    modifier onlySender(address sender) {
        if (msg.sender != sender) revert InvalidSender(msg.sender, sender);
        _;
    }

    modifier validAmount(uint256 amount) {
        if (amount == 0) revert ZeroAmount();
        if (amount > type(uint120).max) revert AmountOverflow(amount, type(uint120).max);
        _;
    }

    /// @notice Collects `amount` from the payer and pays it out at once (less `feeAmount`).
    function charge(
        PaymentInfo calldata paymentInfo,
        uint256 amount,
        address tokenCollector,
        bytes calldata collectorData,
        uint256 feeAmount,
        address feeReceiver
    ) external nonReentrant onlySender(paymentInfo.operator) validAmount(amount) {
        _validatePayment(paymentInfo, amount);
        _validateFee(paymentInfo, amount, feeAmount, feeReceiver);
        bytes32 paymentInfoHash = _firstCollection(paymentInfo);
        paymentState[paymentInfoHash] = PaymentState(true, 0, uint120(amount));
        emit PaymentCharged(paymentInfoHash, paymentInfo, amount, tokenCollector, feeAmount, feeReceiver);
        _collect(paymentInfo, amount, tokenCollector, collectorData, TokenCollector.CollectorType.Payment);
        _distribute(paymentInfo, amount, feeAmount, feeReceiver);
    }

    /// @notice Collects `amount` from the payer into escrow, capturable until `authorizationExpiry`.
    function authorize(
        PaymentInfo calldata paymentInfo,
        uint256 amount,
        address tokenCollector,
        bytes calldata collectorData
    ) external nonReentrant onlySender(paymentInfo.operator) validAmount(amount) {
        _validatePayment(paymentInfo, amount);
        bytes32 paymentInfoHash = _firstCollection(paymentInfo);
        paymentState[paymentInfoHash] = PaymentState(true, uint120(amount), 0);
        emit PaymentAuthorized(paymentInfoHash, paymentInfo, amount, tokenCollector);
        _collect(paymentInfo, amount, tokenCollector, collectorData, TokenCollector.CollectorType.Payment);
    }

    /// @notice Pays `amount` of the hold to the receiver, `feeAmount` of it to the fee receiver.
    function capture(PaymentInfo calldata paymentInfo, uint256 amount, uint256 feeAmount, address feeReceiver)
        external
        nonReentrant
        onlySender(paymentInfo.operator)
        validAmount(amount)
    {
        _validateFee(paymentInfo, amount, feeAmount, feeReceiver);
        if (block.timestamp >= paymentInfo.authorizationExpiry) {
            revert AfterAuthorizationExpiry(uint48(block.timestamp), paymentInfo.authorizationExpiry);
        }
        bytes32 paymentInfoHash = getHash(paymentInfo);
        PaymentState memory state = paymentState[paymentInfoHash];
        if (state.capturableAmount < amount) {
            revert InsufficientAuthorization(paymentInfoHash, state.capturableAmount, amount);
        }
        state.capturableAmount -= uint120(amount);
        state.refundableAmount += uint120(amount);
        paymentState[paymentInfoHash] = state;
        emit PaymentCaptured(paymentInfoHash, amount, feeAmount, feeReceiver);
        _distribute(paymentInfo, amount, feeAmount, feeReceiver);
    }

    /// @notice Returns what is still held to the payer and closes the hold.
    function void(PaymentInfo calldata paymentInfo) external nonReentrant onlySender(paymentInfo.operator) {
        bytes32 paymentInfoHash = getHash(paymentInfo);
        uint256 held = _release(paymentInfoHash);
        emit PaymentVoided(paymentInfoHash, held);
        SafeTransfer.send(paymentInfo.token, paymentInfo.payer, held);
    }

    /// @notice The payer takes back what is still held, once it can no longer be captured.
    function reclaim(PaymentInfo calldata paymentInfo) external nonReentrant onlySender(paymentInfo.payer) {
        if (block.timestamp < paymentInfo.authorizationExpiry) {
            revert BeforeAuthorizationExpiry(uint48(block.timestamp), paymentInfo.authorizationExpiry);
        }
        bytes32 paymentInfoHash = getHash(paymentInfo);
        uint256 held = _release(paymentInfoHash);
        emit PaymentReclaimed(paymentInfoHash, held);
        SafeTransfer.send(paymentInfo.token, paymentInfo.payer, held);
    }

    /// @notice Returns `amount` of what was captured to the payer, with funds a refund collector brings.
    function refund(
        PaymentInfo calldata paymentInfo,
        uint256 amount,
        address tokenCollector,
        bytes calldata collectorData
    ) external nonReentrant onlySender(paymentInfo.operator) validAmount(amount) {
        if (block.timestamp >= paymentInfo.refundExpiry) {
            revert AfterRefundExpiry(uint48(block.timestamp), paymentInfo.refundExpiry);
        }
        bytes32 paymentInfoHash = getHash(paymentInfo);
        uint120 captured = paymentState[paymentInfoHash].refundableAmount;
        if (captured < amount) revert RefundExceedsCapture(amount, captured);
        paymentState[paymentInfoHash].refundableAmount = captured - uint120(amount);
        emit PaymentRefunded(paymentInfoHash, amount, tokenCollector);
        _collect(paymentInfo, amount, tokenCollector, collectorData, TokenCollector.CollectorType.Refund);
        SafeTransfer.send(paymentInfo.token, paymentInfo.payer, amount);
    }

    /// @notice keccak256(abi.encode(chainid, this, keccak256(abi.encode(PAYMENT_INFO_TYPEHASH, paymentInfo)))).
    function getHash(PaymentInfo calldata paymentInfo) public view returns (bytes32) {
        bytes32 paymentInfoHash = keccak256(abi.encode(PAYMENT_INFO_TYPEHASH, paymentInfo));
        return keccak256(abi.encode(block.chainid, address(this), paymentInfoHash));
    }

    /// @notice Where an operator's holds are kept: here, the escrow itself for every operator.
    function getTokenStore(address) public view returns (address) {
        return address(this);
    }

    // ---------------------------------------------------------------- internals

    function _firstCollection(PaymentInfo calldata paymentInfo) private view returns (bytes32 paymentInfoHash) {
        paymentInfoHash = getHash(paymentInfo);
        if (paymentState[paymentInfoHash].hasCollectedPayment) revert PaymentAlreadyCollected(paymentInfoHash);
    }

    function _release(bytes32 paymentInfoHash) private returns (uint256 held) {
        held = paymentState[paymentInfoHash].capturableAmount;
        if (held == 0) revert ZeroAuthorization(paymentInfoHash);
        paymentState[paymentInfoHash].capturableAmount = 0;
    }

    /// @dev Has `tokenCollector` (of the given type) bring `amount` here; the balance must grow by exactly that.
    function _collect(
        PaymentInfo calldata paymentInfo,
        uint256 amount,
        address tokenCollector,
        bytes calldata collectorData,
        TokenCollector.CollectorType collectorType
    ) private {
        if (TokenCollector(tokenCollector).collectorType() != collectorType) revert InvalidCollectorForOperation();
        IERC20 token = IERC20(paymentInfo.token);
        uint256 before = token.balanceOf(address(this));
        TokenCollector(tokenCollector).collectTokens(paymentInfo, address(this), amount, collectorData);
        if (token.balanceOf(address(this)) != before + amount) revert TokenCollectionFailed();
    }

    function _distribute(PaymentInfo calldata paymentInfo, uint256 amount, uint256 feeAmount, address feeReceiver)
        private
    {
        if (feeAmount > 0) SafeTransfer.send(paymentInfo.token, feeReceiver, feeAmount);
        if (amount > feeAmount) SafeTransfer.send(paymentInfo.token, paymentInfo.receiver, amount - feeAmount);
    }

    function _validatePayment(PaymentInfo calldata paymentInfo, uint256 amount) private view {
        if (amount > paymentInfo.maxAmount) revert ExceedsMaxAmount(amount, paymentInfo.maxAmount);
        uint48 preApproval = paymentInfo.preApprovalExpiry;
        uint48 authorization = paymentInfo.authorizationExpiry;
        uint48 refundExpiry = paymentInfo.refundExpiry;
        if (block.timestamp >= preApproval) revert AfterPreApprovalExpiry(uint48(block.timestamp), preApproval);
        if (preApproval > authorization || authorization > refundExpiry) {
            revert InvalidExpiries(preApproval, authorization, refundExpiry);
        }
        if (paymentInfo.maxFeeBps > MAX_FEE_BPS) revert FeeBpsOverflow(paymentInfo.maxFeeBps);
        if (paymentInfo.minFeeBps > paymentInfo.maxFeeBps) {
            revert InvalidFeeBpsRange(paymentInfo.minFeeBps, paymentInfo.maxFeeBps);
        }
    }

    /// @dev The fee lies within [amount * minFeeBps, amount * maxFeeBps] / 10000 (rounded down), goes
    /// somewhere when non-zero, and to PaymentInfo.feeReceiver when that is set.
    function _validateFee(PaymentInfo calldata paymentInfo, uint256 amount, uint256 feeAmount, address feeReceiver)
        private
        pure
    {
        uint256 minFee = amount * paymentInfo.minFeeBps / MAX_FEE_BPS;
        uint256 maxFee = amount * paymentInfo.maxFeeBps / MAX_FEE_BPS;
        if (feeAmount < minFee || feeAmount > maxFee) revert FeeAmountOutOfRange(feeAmount, minFee, maxFee);
        if (feeReceiver == address(0) && feeAmount > 0) revert ZeroFeeReceiver();
        address fixedReceiver = paymentInfo.feeReceiver;
        if (fixedReceiver != address(0) && fixedReceiver != feeReceiver) {
            revert InvalidFeeReceiver(feeReceiver, fixedReceiver);
        }
    }
}

/// @title TokenCollector
/// @notice What the collectors below share: only the escrow may call `collectTokens`, and the
/// payer-agnostic hash (the PaymentInfo hash with the payer zeroed) that the payer's token
/// signature uses as its nonce, so that the signature is good for these payment terms only.
abstract contract TokenCollector {
    enum CollectorType {
        Payment,
        Refund
    }

    /// @notice The escrow, the only caller.
    AuthCaptureEscrow public constant authCaptureEscrow = AuthCaptureEscrow(0xf96815976523E00e65Be8f34cA5e64b4f41EB19c);

    error OnlyAuthCaptureEscrow();

    function collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) external {
        if (msg.sender != address(authCaptureEscrow)) revert OnlyAuthCaptureEscrow();
        _collectTokens(paymentInfo, tokenStore, amount, collectorData);
    }

    function collectorType() external view virtual returns (CollectorType);

    function _collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) internal virtual;

    function _payerAgnosticHash(AuthCaptureEscrow.PaymentInfo calldata paymentInfo) internal view returns (bytes32) {
        AuthCaptureEscrow.PaymentInfo memory terms = paymentInfo;
        terms.payer = address(0);
        return authCaptureEscrow.getHash(terms);
    }
}

/// @title ERC3009PaymentCollector
/// @notice Receives maxAmount with the payer's EIP-3009 ReceiveWithAuthorization (to = this collector,
/// validAfter 0, validBefore = preApprovalExpiry, nonce = the payer-agnostic hash), returns
/// maxAmount - amount to the payer and forwards amount to the escrow. collectorData = the signature.
contract ERC3009PaymentCollector is TokenCollector {
    function collectorType() external pure override returns (CollectorType) {
        return CollectorType.Payment;
    }

    function _collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) internal override {
        address token = paymentInfo.token;
        uint256 maxAmount = paymentInfo.maxAmount;
        IERC3009(token).receiveWithAuthorization(
            paymentInfo.payer,
            address(this),
            maxAmount,
            0,
            paymentInfo.preApprovalExpiry,
            _payerAgnosticHash(paymentInfo),
            collectorData
        );
        if (maxAmount > amount) SafeTransfer.send(token, paymentInfo.payer, maxAmount - amount);
        SafeTransfer.send(token, tokenStore, amount);
    }
}

/// @title Permit2PaymentCollector
/// @notice Moves amount straight to the escrow with the payer's Permit2 PermitTransferFrom (no witness;
/// spender = this collector, permitted = {token, maxAmount}, nonce = uint256(payer-agnostic hash),
/// deadline = preApprovalExpiry). collectorData = the signature.
contract Permit2PaymentCollector is TokenCollector {
    ISignatureTransfer public constant permit2 = ISignatureTransfer(0x000000000022D473030F116dDEE9F6B43aC78BA3);

    function collectorType() external pure override returns (CollectorType) {
        return CollectorType.Payment;
    }

    function _collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata collectorData
    ) internal override {
        ISignatureTransfer.TokenPermissions memory permitted =
            ISignatureTransfer.TokenPermissions({token: paymentInfo.token, amount: paymentInfo.maxAmount});
        permit2.permitTransferFrom(
            ISignatureTransfer.PermitTransferFrom({
                permitted: permitted,
                nonce: uint256(_payerAgnosticHash(paymentInfo)),
                deadline: paymentInfo.preApprovalExpiry
            }),
            ISignatureTransfer.SignatureTransferDetails({to: tokenStore, requestedAmount: amount}),
            paymentInfo.payer,
            collectorData
        );
    }
}

/// @title OperatorRefundCollector
/// @notice Brings a refund from the operator, who must have approved this collector on the token.
/// Only the operator can start a refund (the escrow checks), so no signature is needed.
contract OperatorRefundCollector is TokenCollector {
    function collectorType() external pure override returns (CollectorType) {
        return CollectorType.Refund;
    }

    function _collectTokens(
        AuthCaptureEscrow.PaymentInfo calldata paymentInfo,
        address tokenStore,
        uint256 amount,
        bytes calldata
    ) internal override {
        SafeTransfer.pull(paymentInfo.token, paymentInfo.operator, tokenStore, amount);
    }
}
