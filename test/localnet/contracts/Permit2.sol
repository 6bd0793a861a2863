// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @dev The one ERC-20 call Permit2 makes.
interface IERC20TransferFrom {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
}

/// @dev ERC-1271 signature validation by contract accounts.
interface IERC1271 {
    function isValidSignature(bytes32 hash, bytes memory signature) external view returns (bytes4 magicValue);
}

/// @title Permit2
/// @notice A stand-in for Uniswap's canonical Permit2 on a local test chain, written for the
/// x402-pay interop tests. It has the signature-transfer part the x402 proxies use, with
/// Permit2's function names, arguments, events and errors:
///
/// - `permitWitnessTransferFrom`: moves tokens the owner signed for, to the spender that the
///   signature names (`msg.sender`), with a witness hash and type chosen by the spender.
/// - `permitTransferFrom`: the same without a witness (the auth-capture Permit2 collector uses it).
/// - Unordered nonces: nonce `n` is bit `n & 255` of word `n >> 8` in `nonceBitmap(owner, word)`.
///   Each nonce works once; `invalidateUnorderedNonces` lets an owner burn nonces.
/// - `DOMAIN_SEPARATOR()`: EIP-712 domain { name: "Permit2", chainId, verifyingContract }, no version.
/// - Signatures: ecrecover (65 bytes, or 64-byte EIP-2098 compact) for accounts without code,
///   ERC-1271 for accounts with code.
///
/// Not here: batch transfers and the allowance-based half of Permit2 (AllowanceTransfer). The
/// reference facilitator uses neither: it reads ERC-20 allowances from the token itself and
/// settles through the proxies and collectors.
///
/// The runtime code is copied to 0x000000000022D473030F116dDEE9F6B43aC78BA3 with anvil_setCode,
/// so no constructor runs: the domain separator is derived from `address(this)` and
/// `block.chainid` on each call, and the nonce bitmap is the only storage.
contract Permit2 {
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

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("Permit2");
    bytes32 private constant TOKEN_PERMISSIONS_TYPEHASH = keccak256("TokenPermissions(address token,uint256 amount)");
    bytes32 private constant PERMIT_TRANSFER_FROM_TYPEHASH = keccak256(
        "PermitTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline)"
        "TokenPermissions(address token,uint256 amount)"
    );

    /// @dev The fixed start of every witness transfer's type; the spender passes the rest, from
    /// the witness member to the last referenced type, e.g. "Witness witness)TokenPermissions(...)Witness(...)".
    bytes private constant WITNESS_TRANSFER_TYPE_START =
        "PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,";

    /// @dev ERC-1271 success value (the selector of `isValidSignature(bytes32,bytes)`).
    bytes4 private constant ERC1271_MAGIC_VALUE = 0x1626ba7e;

    /// @notice Used nonces: owner => word index => 256 bits, one per nonce.
    mapping(address => mapping(uint256 => uint256)) public nonceBitmap;

    event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask);

    /// @notice The signature's deadline has passed.
    error SignatureExpired(uint256 signatureDeadline);
    /// @notice The spender asked for more than the owner signed for.
    error InvalidAmount(uint256 maxAmount);
    /// @notice The nonce was used or invalidated before.
    error InvalidNonce();
    /// @notice ecrecover found no signer.
    error InvalidSignature();
    /// @notice The signature is from someone other than the owner.
    error InvalidSigner();
    /// @notice A signature for an account without code must be 64 or 65 bytes.
    error InvalidSignatureLength();
    /// @notice The owner's contract did not accept the signature (ERC-1271).
    error InvalidContractSignature();
    /// @notice The token refused the transfer or is not a contract.
    error TransferFromFailed();

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, block.chainid, address(this)));
    }

    /// @notice Moves `transferDetails.requestedAmount` (at most `permit.permitted.amount`) of
    /// `permit.permitted.token` from `owner` to `transferDetails.to`, if `owner` signed `permit`
    /// for `msg.sender` with this witness.
    function permitWitnessTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes32 witness,
        string calldata witnessTypeString,
        bytes calldata signature
    ) external {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useNonce(owner, permit.nonce);
        _checkSignature(owner, _digest(_witnessTransferHash(permit, witness, witnessTypeString)), signature);
        _pull(permit.permitted.token, owner, transferDetails.to, transferDetails.requestedAmount);
    }

    /// @notice As `permitWitnessTransferFrom`, for a plain PermitTransferFrom signature (no witness).
    function permitTransferFrom(
        PermitTransferFrom calldata permit,
        SignatureTransferDetails calldata transferDetails,
        address owner,
        bytes calldata signature
    ) external {
        if (block.timestamp > permit.deadline) revert SignatureExpired(permit.deadline);
        if (transferDetails.requestedAmount > permit.permitted.amount) revert InvalidAmount(permit.permitted.amount);
        _useNonce(owner, permit.nonce);
        bytes32 permissionsHash =
            keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permit.permitted.token, permit.permitted.amount));
        bytes32 structHash = keccak256(
            abi.encode(PERMIT_TRANSFER_FROM_TYPEHASH, permissionsHash, msg.sender, permit.nonce, permit.deadline)
        );
        _checkSignature(owner, _digest(structHash), signature);
        _pull(permit.permitted.token, owner, transferDetails.to, transferDetails.requestedAmount);
    }

    /// @notice Marks as used every nonce of word `wordPos` whose bit is set in `mask`.
    function invalidateUnorderedNonces(uint256 wordPos, uint256 mask) external {
        nonceBitmap[msg.sender][wordPos] |= mask;
        emit UnorderedNonceInvalidation(msg.sender, wordPos, mask);
    }

    // ---------------------------------------------------------------- internals

    /// @dev EIP-712 struct hash of PermitWitnessTransferFrom, with spender = msg.sender.
    function _witnessTransferHash(PermitTransferFrom calldata permit, bytes32 witness, string calldata witnessTypeString)
        private
        view
        returns (bytes32)
    {
        bytes32 typeHash = keccak256(abi.encodePacked(WITNESS_TRANSFER_TYPE_START, witnessTypeString));
        bytes32 permissionsHash =
            keccak256(abi.encode(TOKEN_PERMISSIONS_TYPEHASH, permit.permitted.token, permit.permitted.amount));
        return keccak256(abi.encode(typeHash, permissionsHash, msg.sender, permit.nonce, permit.deadline, witness));
    }

    function _digest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked(hex"1901", DOMAIN_SEPARATOR(), structHash));
    }

    function _useNonce(address owner, uint256 nonce) private {
        uint256 word = nonce >> 8;
        uint256 bit = 1 << (nonce & 0xff);
        uint256 used = nonceBitmap[owner][word];
        if (used & bit != 0) revert InvalidNonce();
        nonceBitmap[owner][word] = used | bit;
    }

    function _checkSignature(address owner, bytes32 digest, bytes calldata signature) private view {
        if (owner.code.length > 0) {
            if (IERC1271(owner).isValidSignature(digest, signature) != ERC1271_MAGIC_VALUE) {
                revert InvalidContractSignature();
            }
            return;
        }
        bytes32 r;
        bytes32 s;
        uint8 v;
        if (signature.length == 65) {
            r = bytes32(signature[0:32]);
            s = bytes32(signature[32:64]);
            v = uint8(signature[64]);
        } else if (signature.length == 64) {
            // EIP-2098: the top bit of the second word holds v - 27, the rest is s.
            r = bytes32(signature[0:32]);
            uint256 vs = uint256(bytes32(signature[32:64]));
            s = bytes32(vs & (type(uint256).max >> 1));
            v = uint8(vs >> 255) + 27;
        } else {
            revert InvalidSignatureLength();
        }
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
        if (signer != owner) revert InvalidSigner();
    }

    /// @dev `token.transferFrom(from, to, amount)`; accepts tokens that return nothing. A token
    /// revert is passed on as is, so its reason reaches the caller.
    function _pull(address token, address from, address to, uint256 amount) private {
        if (token.code.length == 0) revert TransferFromFailed();
        (bool ok, bytes memory result) =
            token.call(abi.encodeCall(IERC20TransferFrom.transferFrom, (from, to, amount)));
        if (!ok) {
            assembly {
                revert(add(result, 0x20), mload(result))
            }
        }
        if (result.length > 0 && !abi.decode(result, (bool))) revert TransferFromFailed();
    }
}
