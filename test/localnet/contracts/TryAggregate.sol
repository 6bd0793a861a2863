// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title TryAggregate
/// @notice The `tryAggregate` entry point of Multicall3, for local chains that have no Multicall3.
///
/// The interop harness places this runtime code at 0xcA11bde05977b3631167028862bE2a173976CA11,
/// the Multicall3 address on public chains. The reference facilitator calls `tryAggregate` there
/// (through eth_call) to explain a failed payment simulation: balance, token name and version,
/// and whether the EIP-3009 nonce was used. Without it every such failure is reported as a
/// generic simulation failure.
contract TryAggregate {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Calls each target in order; a failing call reverts everything only if `requireSuccess`.
    function tryAggregate(bool requireSuccess, Call[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory returnData) = calls[i].target.call(calls[i].callData);
            require(success || !requireSuccess, "TryAggregate: call failed");
            results[i] = Result(success, returnData);
        }
    }
}
