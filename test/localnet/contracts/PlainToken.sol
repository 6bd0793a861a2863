// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.24;

/// @title PlainToken
/// @notice A bare ERC-20 for a local test chain, used by the x402-pay interop tests for tokens
/// that offer neither EIP-2612 `permit` nor EIP-3009: a buyer can only pay with them through
/// Permit2 after an ERC-20 `approve` (sent by the buyer, or pre-signed for a facilitator).
///
/// - 6 decimals, name "Plain Token", symbol "PLAIN".
/// - An allowance of 2^256 - 1 is never decreased (as in most tokens).
/// - `mint` is open to anyone: this is a test token without value.
///
/// The runtime code is meant to be copied to a fixed address (anvil_setCode): nothing is
/// initialised in storage.
contract PlainToken {
    string public constant name = "Plain Token";
    string public constant symbol = "PLAIN";
    uint8 public constant decimals = 6;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    function transfer(address to, uint256 value) external returns (bool) {
        _transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        require(spender != address(0), "PlainToken: approve to the zero address");
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "PlainToken: transfer amount exceeds allowance");
            unchecked {
                allowance[from][msg.sender] = allowed - value;
            }
        }
        _transfer(from, to, value);
        return true;
    }

    /// @notice Creates `value` tokens for `to`. Open to anyone (test token).
    function mint(address to, uint256 value) external {
        require(to != address(0), "PlainToken: mint to the zero address");
        totalSupply += value;
        unchecked {
            balanceOf[to] += value;
        }
        emit Transfer(address(0), to, value);
    }

    function _transfer(address from, address to, uint256 value) private {
        require(to != address(0), "PlainToken: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "PlainToken: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - value;
            balanceOf[to] += value;
        }
        emit Transfer(from, to, value);
    }
}
