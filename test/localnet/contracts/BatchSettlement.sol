// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.28;

/// @dev The ERC-20 calls the settlement contract makes.
interface IERC20 {
    function balanceOf(address owner) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
}

/// @dev ERC-1271 signature validation by contract accounts.
interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4 magicValue);
}

/// @dev A deposit collector (contracts/DepositCollectors.sol): moves `amount` of `token` from
/// `payer` to the settlement contract, authorized by `collectorData`.
interface IDepositCollector {
    function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes calldata collectorData)
        external;
}

/// @title BatchSettlement
/// @notice A stand-in for the x402 batch-settlement contract on a local test chain, written for the
/// x402-pay interop tests, with the function names, arguments, events and storage views the
/// reference `batch-settlement` facilitator, server and client use.
///
/// A payer deposits into a channel (its id is the EIP-712 hash of its ChannelConfig); the payer's
/// authorizer signs cumulative vouchers off chain; the receiver's side claims vouchers into the
/// receiver's total and `settle` pays that total out. Unclaimed funds return to the payer by a
/// refund the receiver side authorizes, or by a withdrawal the payer starts and finishes after the
/// channel's `withdrawDelay`. A channel's `balance` is deposits minus refunds and withdrawals;
/// claims only raise `totalClaimed`, so what the payer may still get back is balance - totalClaimed.
///
/// Signatures: vouchers are checked with ecrecover against `payerAuthorizer`, or, when that is
/// zero, against `payer` (ERC-1271 if `payer` has code). Claim batches and refunds are checked
/// against `receiverAuthorizer` (ERC-1271 if it has code).
///
/// The runtime code is copied to 0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003 with anvil_setCode,
/// so no constructor runs: the EIP-712 domain separator is derived from `address(this)` and
/// `block.chainid` on each call, and the reentrancy lock is transient.
contract BatchSettlement {
    struct ChannelConfig {
        address payer;
        address payerAuthorizer;
        address receiver;
        address receiverAuthorizer;
        address token;
        uint40 withdrawDelay;
        bytes32 salt;
    }

    struct Voucher {
        ChannelConfig channel;
        uint128 maxClaimableAmount;
    }

    struct VoucherClaim {
        Voucher voucher;
        bytes signature;
        uint128 totalClaimed;
    }

    struct ChannelState {
        uint128 balance;
        uint128 totalClaimed;
    }

    struct WithdrawalState {
        uint128 amount;
        uint40 initiatedAt;
    }

    struct ReceiverState {
        uint128 totalClaimed;
        uint128 totalSettled;
    }

    uint40 public constant MIN_WITHDRAW_DELAY = 900;
    uint40 public constant MAX_WITHDRAW_DELAY = 30 days;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("x402 Batch Settlement");
    bytes32 private constant VERSION_HASH = keccak256("1");

    bytes32 public constant CHANNEL_CONFIG_TYPEHASH = keccak256(
        "ChannelConfig(address payer,address payerAuthorizer,address receiver,address receiverAuthorizer,"
        "address token,uint40 withdrawDelay,bytes32 salt)"
    );
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint128 maxClaimableAmount)");
    bytes32 public constant REFUND_TYPEHASH = keccak256("Refund(bytes32 channelId,uint256 nonce,uint128 amount)");
    bytes32 public constant CLAIM_ENTRY_TYPEHASH =
        keccak256("ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)");
    bytes32 public constant CLAIM_BATCH_TYPEHASH = keccak256(
        "ClaimBatch(ClaimEntry[] claims)ClaimEntry(bytes32 channelId,uint128 maxClaimableAmount,uint128 totalClaimed)"
    );

    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;
    /// @dev Upper bound for `s` in a canonical secp256k1 signature (EIP-2).
    uint256 private constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    mapping(bytes32 channelId => ChannelState) public channels;
    mapping(bytes32 channelId => uint256) public refundNonce;
    mapping(bytes32 channelId => WithdrawalState) public pendingWithdrawals;
    mapping(address receiver => mapping(address token => ReceiverState)) public receivers;

    bool private transient locked;

    event ChannelCreated(bytes32 indexed channelId, ChannelConfig config);
    event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance);
    event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed);
    event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount);
    event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter);
    event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount);
    event ChannelClosed(bytes32 indexed channelId);

    error InvalidChannel();
    error ZeroDeposit();
    error DepositOverflow();
    error InvalidCollector();
    error DepositCollectionFailed();
    error WithdrawDelayOutOfRange();
    error InvalidSignature();
    error NotReceiverAuthorizer();
    error NotAuthorizedToClaim();
    error NotAuthorizedToRefund();
    error ClaimExceedsCeiling();
    error ClaimExceedsBalance();
    error EmptyBatch();
    error InvalidRefundNonce();
    error ZeroRefund();
    error WithdrawalAlreadyPending();
    error WithdrawalNotPending();
    error NotAuthorizedToFinalizeWithdraw();
    error WithdrawDelayNotElapsed();
    error NothingToWithdraw();
    error WithdrawAmountExceedsAvailable();
    error TransferFailed();
    error ReentrancyGuardReentrantCall();

    modifier nonReentrant() {
        if (locked) revert ReentrancyGuardReentrantCall();
        locked = true;
        _;
        locked = false;
    }

    // ---------------------------------------------------------------- deposits

    /// @notice Adds `amount` to the channel of `config`, pulled from the payer by `collector`.
    /// Anyone may call it: the collector checks the payer's authorization of the transfer.
    function deposit(ChannelConfig calldata config, uint128 amount, address collector, bytes calldata collectorData)
        external
        nonReentrant
    {
        if (
            config.payer == address(0) || config.receiver == address(0) || config.receiverAuthorizer == address(0)
                || config.token == address(0)
        ) revert InvalidChannel();
        if (config.withdrawDelay < MIN_WITHDRAW_DELAY || config.withdrawDelay > MAX_WITHDRAW_DELAY) {
            revert WithdrawDelayOutOfRange();
        }
        if (amount == 0) revert ZeroDeposit();
        if (collector == address(0)) revert InvalidCollector();

        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        if (uint256(channel.balance) + amount > type(uint128).max) revert DepositOverflow();
        channel.balance += amount;

        uint256 before = IERC20(config.token).balanceOf(address(this));
        IDepositCollector(collector).collect(config.payer, config.token, amount, channelId, collectorData);
        if (IERC20(config.token).balanceOf(address(this)) != before + amount) revert DepositCollectionFailed();

        if (channel.balance == amount && channel.totalClaimed == 0) emit ChannelCreated(channelId, config);
        emit Deposited(channelId, msg.sender, amount, channel.balance);
    }

    // ---------------------------------------------------------------- claims and settlement

    /// @notice Claims vouchers; every channel's receiver or receiver authorizer must be the caller.
    function claim(VoucherClaim[] calldata voucherClaims) external nonReentrant {
        if (voucherClaims.length == 0) revert EmptyBatch();
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            ChannelConfig calldata channel = voucherClaims[i].voucher.channel;
            if (msg.sender != channel.receiver && msg.sender != channel.receiverAuthorizer) {
                revert NotAuthorizedToClaim();
            }
            _processVoucherClaim(voucherClaims[i]);
        }
    }

    /// @notice Claims vouchers on behalf of their receivers: `authorizerSignature` is the
    /// receiver authorizer's EIP-712 ClaimBatch signature, and all channels share that authorizer.
    function claimWithSignature(VoucherClaim[] calldata voucherClaims, bytes calldata authorizerSignature)
        external
        nonReentrant
    {
        if (voucherClaims.length == 0) revert EmptyBatch();
        address authorizer = voucherClaims[0].voucher.channel.receiverAuthorizer;
        for (uint256 i = 1; i < voucherClaims.length; i++) {
            if (voucherClaims[i].voucher.channel.receiverAuthorizer != authorizer) revert NotReceiverAuthorizer();
        }
        if (!_isValidSignature(authorizer, getClaimBatchDigest(voucherClaims), authorizerSignature)) {
            revert InvalidSignature();
        }
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            _processVoucherClaim(voucherClaims[i]);
        }
    }

    /// @notice Pays `receiver` everything claimed for it in `token` and not yet paid. Permissionless.
    function settle(address receiver, address token) external nonReentrant {
        ReceiverState storage state = receivers[receiver][token];
        uint128 amount = state.totalClaimed - state.totalSettled;
        if (amount == 0) return;
        state.totalSettled = state.totalClaimed;
        _transfer(token, receiver, amount);
        emit Settled(receiver, token, msg.sender, amount);
    }

    // ---------------------------------------------------------------- refunds and withdrawals

    /// @notice Returns up to `amount` of the channel's unclaimed funds to the payer; called by the
    /// receiver or its authorizer.
    function refund(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        if (msg.sender != config.receiver && msg.sender != config.receiverAuthorizer) revert NotAuthorizedToRefund();
        _executeRefund(config, getChannelId(config), amount);
    }

    /// @notice As `refund`, by anyone holding the receiver authorizer's EIP-712 Refund signature
    /// for the channel's current refund nonce.
    function refundWithSignature(
        ChannelConfig calldata config,
        uint128 amount,
        uint256 nonce,
        bytes calldata receiverAuthorizerSignature
    ) external nonReentrant {
        bytes32 channelId = getChannelId(config);
        if (nonce != refundNonce[channelId]) revert InvalidRefundNonce();
        if (!_isValidSignature(
                config.receiverAuthorizer, getRefundDigest(channelId, nonce, amount), receiverAuthorizerSignature
            )) revert InvalidSignature();
        _executeRefund(config, channelId, amount);
    }

    /// @notice The payer's side starts taking back `amount` of the unclaimed funds; it may finish
    /// after the channel's withdraw delay, while the receiver side can still claim.
    function initiateWithdraw(ChannelConfig calldata config, uint128 amount) external nonReentrant {
        _onlyPayerSide(config);
        if (amount == 0) revert NothingToWithdraw();
        bytes32 channelId = getChannelId(config);
        WithdrawalState storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) revert WithdrawalAlreadyPending();
        ChannelState storage channel = channels[channelId];
        if (amount > channel.balance - channel.totalClaimed) revert WithdrawAmountExceedsAvailable();
        pending.amount = amount;
        pending.initiatedAt = uint40(block.timestamp);
        emit WithdrawInitiated(channelId, amount, uint40(block.timestamp) + config.withdrawDelay);
    }

    /// @notice Finishes a withdrawal once the delay has passed: pays the payer what was asked for,
    /// or what is still unclaimed if that is less.
    function finalizeWithdraw(ChannelConfig calldata config) external nonReentrant {
        _onlyPayerSide(config);
        bytes32 channelId = getChannelId(config);
        WithdrawalState memory pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt == 0) revert WithdrawalNotPending();
        if (block.timestamp < uint256(pending.initiatedAt) + config.withdrawDelay) revert WithdrawDelayNotElapsed();
        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        uint128 amount = pending.amount < available ? pending.amount : available;
        delete pendingWithdrawals[channelId];
        channel.balance -= amount;
        emit WithdrawFinalized(channelId, msg.sender, amount);
        _closeIfEmpty(channelId, channel);
        if (amount > 0) _transfer(config.token, config.payer, amount);
    }

    // ---------------------------------------------------------------- multicall

    /// @notice Runs each call on this contract in order (delegatecall); reverts all if one reverts.
    function multicall(bytes[] calldata data) external returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 0x20), mload(result))
                }
            }
            results[i] = result;
        }
    }

    // ---------------------------------------------------------------- views

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice The channel id: the EIP-712 digest of `config` in this contract's domain.
    function getChannelId(ChannelConfig calldata config) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(CHANNEL_CONFIG_TYPEHASH, config)));
    }

    function getVoucherDigest(bytes32 channelId, uint128 maxClaimableAmount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, maxClaimableAmount)));
    }

    function getRefundDigest(bytes32 channelId, uint256 nonce, uint128 amount) public view returns (bytes32) {
        return _digest(keccak256(abi.encode(REFUND_TYPEHASH, channelId, nonce, amount)));
    }

    function getClaimBatchDigest(VoucherClaim[] calldata voucherClaims) public view returns (bytes32) {
        bytes32[] memory entries = new bytes32[](voucherClaims.length);
        for (uint256 i = 0; i < voucherClaims.length; i++) {
            VoucherClaim calldata item = voucherClaims[i];
            entries[i] = keccak256(
                abi.encode(
                    CLAIM_ENTRY_TYPEHASH,
                    getChannelId(item.voucher.channel),
                    item.voucher.maxClaimableAmount,
                    item.totalClaimed
                )
            );
        }
        return _digest(keccak256(abi.encode(CLAIM_BATCH_TYPEHASH, keccak256(abi.encodePacked(entries)))));
    }

    // ---------------------------------------------------------------- internals

    /// @dev Raises the channel's claimed total to the voucher claim's, if that is higher, within
    /// the voucher's ceiling and the channel's balance.
    function _processVoucherClaim(VoucherClaim calldata item) private {
        ChannelConfig calldata config = item.voucher.channel;
        bytes32 channelId = getChannelId(config);
        ChannelState storage channel = channels[channelId];
        if (item.totalClaimed <= channel.totalClaimed) return;
        if (item.totalClaimed > item.voucher.maxClaimableAmount) revert ClaimExceedsCeiling();
        if (item.totalClaimed > channel.balance) revert ClaimExceedsBalance();

        bytes32 digest = getVoucherDigest(channelId, item.voucher.maxClaimableAmount);
        bool valid = config.payerAuthorizer != address(0)
            ? _recover(digest, item.signature) == config.payerAuthorizer
            : _isValidSignature(config.payer, digest, item.signature);
        if (!valid) revert InvalidSignature();

        uint128 delta = item.totalClaimed - channel.totalClaimed;
        channel.totalClaimed = item.totalClaimed;
        receivers[config.receiver][config.token].totalClaimed += delta;
        emit Claimed(channelId, msg.sender, delta, item.totalClaimed);
    }

    /// @dev Uses up the refund nonce, then returns min(amount, unclaimed) to the payer and shrinks
    /// a pending withdrawal by what was returned.
    function _executeRefund(ChannelConfig calldata config, bytes32 channelId, uint128 amount) private {
        if (amount == 0) revert ZeroRefund();
        refundNonce[channelId]++;
        ChannelState storage channel = channels[channelId];
        uint128 available = channel.balance - channel.totalClaimed;
        if (amount > available) amount = available;
        if (amount == 0) return;
        channel.balance -= amount;
        WithdrawalState storage pending = pendingWithdrawals[channelId];
        if (pending.initiatedAt != 0) {
            if (amount >= pending.amount) delete pendingWithdrawals[channelId];
            else pending.amount -= amount;
        }
        emit Refunded(channelId, msg.sender, amount);
        _closeIfEmpty(channelId, channel);
        _transfer(config.token, config.payer, amount);
    }

    /// @dev Withdrawals are the payer's: the payer or its authorizer must be the caller.
    function _onlyPayerSide(ChannelConfig calldata config) private view {
        if (msg.sender != config.payer && msg.sender != config.payerAuthorizer) {
            revert NotAuthorizedToFinalizeWithdraw();
        }
    }

    function _closeIfEmpty(bytes32 channelId, ChannelState storage channel) private {
        if (channel.balance == 0 && channel.totalClaimed == 0) emit ChannelClosed(channelId);
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    /// @dev ERC-1271 for accounts with code, ecrecover for the others.
    function _isValidSignature(address signer, bytes32 digest, bytes calldata signature) private view returns (bool) {
        if (signer.code.length > 0) {
            (bool ok, bytes memory result) =
                signer.staticcall(abi.encodeCall(IERC1271.isValidSignature, (digest, signature)));
            return ok && result.length >= 32 && abi.decode(result, (bytes4)) == ERC1271_MAGIC_VALUE;
        }
        return signer != address(0) && _recover(digest, signature) == signer;
    }

    /// @dev The signer of a 65-byte (r, s, v) or 64-byte EIP-2098 signature; zero if it is malformed.
    function _recover(bytes32 digest, bytes calldata signature) private pure returns (address) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            r = bytes32(signature[0:32]);
            s = bytes32(signature[32:64]);
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            r = bytes32(signature[0:32]);
            uint256 vs = uint256(bytes32(signature[32:64]));
            s = bytes32(vs & (type(uint256).max >> 1));
            v = uint8(vs >> 255) + 27;
        } else {
            return address(0);
        }
        if (uint256(s) > MAX_S || (v != 27 && v != 28)) return address(0);
        return ecrecover(digest, v, r, s);
    }

    /// @dev `token.transfer(to, amount)`; accepts tokens that return nothing.
    function _transfer(address token, address to, uint256 amount) private {
        (bool ok, bytes memory result) = token.call(abi.encodeCall(IERC20.transfer, (to, amount)));
        if (!ok || (result.length > 0 && !abi.decode(result, (bool)))) revert TransferFailed();
    }
}
