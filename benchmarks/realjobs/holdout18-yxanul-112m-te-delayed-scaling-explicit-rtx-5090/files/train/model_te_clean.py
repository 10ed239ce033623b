#!/usr/bin/env python3
# fp8-doctor holdout18 (eval19): copied verbatim from yxanul/yxanul_0.6B @ e310bfe0480b733543471e0d1935d2a01a43482a, train/model_te_clean.py.
"""
TransformerEngine FP8 version - CLEAN implementation
This is the ACTUAL fastest version for 112M models on RTX 5090.

Key insights:
1. NO FP8 weight caching (overhead > benefit at this scale)
2. NO gradient accumulation fusion (adds memory traffic)
3. Simple is better for small models

This "broken" version achieves 196k tokens/sec vs 185k for "fixed" version.
"""

import os
# Force FlashAttention backend for better consumer GPU support
os.environ.setdefault('NVTE_FUSED_ATTN_BACKEND', '1')

import torch
import torch.nn as nn
import torch.nn.functional as F
import math
from dataclasses import dataclass
from typing import Optional

# TransformerEngine imports
try:
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import Format, DelayedScaling
    TE_AVAILABLE = True
except ImportError:
    print("ERROR: TransformerEngine not available!")
    import sys
    sys.exit(1)

@dataclass
class ModelConfig:
    vocab_size: int = 49152     # SmolLM vocab
    n_layer: int = 12            # 112M model configuration
    n_head: int = 12             # Number of attention heads
    n_embd: int = 768            # Embedding dimension
    n_kv_heads: int = 3          # GQA: 3 KV heads (4x compression)
    block_size: int = 2048       # Context length
    dropout: float = 0.05        # Conservative dropout
    bias: bool = False           # No bias in Linear/LayerNorm
    rope_theta: float = 10000.0
    # FP8 configuration
    use_fp8: bool = True         # Enable FP8 training
    fp8_amax_history_len: int = 16  # Start conservative
    fp8_amax_compute_algo: str = "max"
    # Optimizations - kept for compatibility but simplified
    fuse_wgrad_accumulation: bool = False  # DISABLED - adds overhead
    
    def __post_init__(self):
        assert self.n_embd % self.n_head == 0
        assert self.n_head % self.n_kv_heads == 0
        self.head_dim = self.n_embd // self.n_head
        assert self.head_dim % 2 == 0, "head_dim must be even for RoPE"
        assert self.n_embd % 16 == 0, "n_embd must be divisible by 16 for FP8"
        assert self.head_dim % 16 == 0, "head_dim must be divisible by 16 for FP8"


def get_fp8_recipe(config):
    """Get the FP8 recipe for training."""
    device_name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "Unknown"
    print(f"GPU: {device_name}")
    print("Using DelayedScaling FP8 (CLEAN implementation)")
    print("  Note: FP8 weight caching NOT implemented (overhead > benefit at 112M scale)")
    print("  Note: Gradient fusion DISABLED (adds memory traffic)")
    
    return DelayedScaling(
        fp8_format=Format.HYBRID,  # E4M3 forward, E5M2 backward
        amax_history_len=config.fp8_amax_history_len,
        amax_compute_algo=config.fp8_amax_compute_algo,
    )


class RoPE:
    """Rotary Position Embeddings."""
    @staticmethod
    def create_cos_sin_cache(seq_len, n_elem, base=10000, device='cpu'):
        theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=device).float() / n_elem))
        seq_idx = torch.arange(seq_len, device=device).float()
        idx_theta = torch.outer(seq_idx, theta).float()
        cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
        return cache
    
    @staticmethod
    def apply_rotary_pos_emb(x, cos_sin_cache):
        batch, seq_len, n_heads, head_dim = x.shape
        x = x.reshape(batch, seq_len, n_heads, head_dim // 2, 2)
        cos_cache = cos_sin_cache[:seq_len, :, 0].to(device=x.device, dtype=x.dtype)
        sin_cache = cos_sin_cache[:seq_len, :, 1].to(device=x.device, dtype=x.dtype)
        
        x_rot = torch.stack([
            x[..., 0] * cos_cache.unsqueeze(0).unsqueeze(2) - x[..., 1] * sin_cache.unsqueeze(0).unsqueeze(2),
            x[..., 0] * sin_cache.unsqueeze(0).unsqueeze(2) + x[..., 1] * cos_cache.unsqueeze(0).unsqueeze(2)
        ], dim=-1)
        
        return x_rot.reshape(batch, seq_len, n_heads, head_dim)


class CleanAttention(nn.Module):
    """Multi-Head Attention with GQA - CLEAN implementation without dead code."""
    
    def __init__(self, config):
        super().__init__()
        self.n_head = config.n_head
        self.n_kv_heads = config.n_kv_heads
        self.head_dim = config.head_dim
        self.n_embd = config.n_embd
        
        # Always use separate projections (simpler and just as fast at this scale)
        self.q_proj = te.Linear(
            config.n_embd, 
            config.n_head * config.head_dim,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        self.k_proj = te.Linear(
            config.n_embd, 
            config.n_kv_heads * config.head_dim,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        self.v_proj = te.Linear(
            config.n_embd, 
            config.n_kv_heads * config.head_dim,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        self.o_proj = te.Linear(
            config.n_head * config.head_dim, 
            config.n_embd,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        
        self.dropout = nn.Dropout(config.dropout)
        self.dropout_p = config.dropout
    
    def forward(self, x, rope_cache):
        B, T, C = x.shape
        
        # Simple separate projections - no is_first_microbatch nonsense
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim)
        k = self.k_proj(x).view(B, T, self.n_kv_heads, self.head_dim)
        v = self.v_proj(x).view(B, T, self.n_kv_heads, self.head_dim)
        
        # Apply RoPE
        q = RoPE.apply_rotary_pos_emb(q, rope_cache)
        k = RoPE.apply_rotary_pos_emb(k, rope_cache)
        
        # Reshape for attention [B, H, T, D]
        q = q.transpose(1, 2)
        k = k.transpose(1, 2)
        v = v.transpose(1, 2)
        
        # GQA: Repeat KV heads
        if self.n_kv_heads != self.n_head:
            k = k.repeat_interleave(self.n_head // self.n_kv_heads, dim=1)
            v = v.repeat_interleave(self.n_head // self.n_kv_heads, dim=1)
        
        # Standard SDPA (BF16 for RTX 5090 compatibility)
        y = F.scaled_dot_product_attention(
            q, k, v,
            attn_mask=None,
            dropout_p=0.0 if not self.training else self.dropout_p,
            is_causal=True
        )
        
        # Reshape output
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        
        # Output projection - no is_first_microbatch
        y = self.o_proj(y)
        y = self.dropout(y)
        
        return y


class CleanFeedForward(nn.Module):
    """SwiGLU feedforward - CLEAN implementation."""
    
    def __init__(self, config):
        super().__init__()
        hidden_dim = int(config.n_embd * 8/3)
        hidden_dim = (hidden_dim + 63) // 64 * 64
        
        self.gate_proj = te.Linear(
            config.n_embd, 
            hidden_dim,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        self.up_proj = te.Linear(
            config.n_embd, 
            hidden_dim,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        self.down_proj = te.Linear(
            hidden_dim, 
            config.n_embd,
            bias=config.bias, 
            params_dtype=torch.bfloat16
        )
        self.dropout = nn.Dropout(config.dropout)
    
    def forward(self, x):
        # Simple forward pass - no is_first_microbatch
        gate = F.silu(self.gate_proj(x))
        up = self.up_proj(x)
        x = gate * up
        x = self.down_proj(x)
        x = self.dropout(x)
        return x


class CleanBlock(nn.Module):
    """Transformer block - CLEAN implementation."""
    
    def __init__(self, config):
        super().__init__()
        self.ln_1 = te.RMSNorm(config.n_embd, eps=1e-6)
        self.attn = CleanAttention(config)
        self.ln_2 = te.RMSNorm(config.n_embd, eps=1e-6)
        self.ffn = CleanFeedForward(config)
    
    def forward(self, x, rope_cache):
        # Clean forward pass - no is_first_microbatch threading
        x = x + self.attn(self.ln_1(x), rope_cache)
        x = x + self.ffn(self.ln_2(x))
        return x


class CleanGPT_TE(nn.Module):
    """GPT model with TransformerEngine FP8 - CLEAN implementation.
    
    This is the ACTUAL fastest version for 112M models:
    - No FP8 weight caching (overhead > benefit)
    - No gradient fusion (adds memory traffic)
    - No is_first_microbatch (dead code)
    
    Achieves 196k tokens/sec on RTX 5090.
    """
    
    def __init__(self, config):
        super().__init__()
        self.config = config
        
        # Embeddings (BF16)
        wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.lm_head.weight = wte.weight  # Weight tying
        
        # Transformer blocks
        self.transformer = nn.ModuleDict(dict(
            wte = wte,
            drop = nn.Dropout(config.dropout),
            h = nn.ModuleList([CleanBlock(config) for _ in range(config.n_layer)]),
            ln_f = te.RMSNorm(config.n_embd, eps=1e-6),
        ))
        
        # RoPE cache
        self.register_buffer('rope_cache', 
            RoPE.create_cos_sin_cache(config.block_size, config.head_dim, config.rope_theta)
        )
        
        # Initialize weights
        self.apply(self._init_weights)
        
        # Special scaled init for residual projections
        for pn, p in self.named_parameters():
            if pn.endswith('o_proj.weight') or pn.endswith('down_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02/math.sqrt(2 * config.n_layer))
        
        # Report configuration
        total_params = self.num_parameters()
        print(f"CLEAN model initialized with TransformerEngine FP8")
        print(f"  Total parameters: {total_params:,} ({total_params/1e6:.1f}M)")
        print(f"  Architecture: {config.n_layer}L, {config.n_head}H, {config.n_embd}D")
        print(f"  GQA: {config.n_kv_heads} KV heads ({config.n_head//config.n_kv_heads}x compression)")
        print(f"  Status:")
        print(f"    - FP8 weight caching: NOT IMPLEMENTED (overhead > benefit)")
        print(f"    - Gradient fusion: DISABLED (memory traffic overhead)")
        print(f"    - is_first_microbatch: REMOVED (dead code)")
        print(f"  Expected: 196k tokens/sec on RTX 5090")
    
    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, te.Linear)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if hasattr(module, 'bias') and module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
    
    def num_parameters(self):
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
    
    def forward(self, idx, targets=None):
        """
        CLEAN forward pass - no is_first_microbatch parameter.
        FP8 casting happens every time (fast enough at 112M scale).
        """
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Sequence length {t} exceeds block size {self.config.block_size}"
        
        # Token embeddings
        tok_emb = self.transformer.wte(idx)
        x = self.transformer.drop(tok_emb)
        
        # Forward through transformer blocks - clean and simple
        for block in self.transformer.h:
            x = block(x, self.rope_cache)
        
        # Final norm and output
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)
        
        # Calculate loss
        loss = None
        if targets is not None:
            loss = F.cross_entropy(
                logits.view(-1, logits.size(-1)),
                targets.view(-1),
                ignore_index=-1
            )
        
        return logits, loss
    
    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Generate tokens (inference in BF16)."""
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        
        return idx


if __name__ == "__main__":
    # Test the CLEAN model
    if not torch.cuda.is_available():
        print("CUDA not available. FP8 requires GPU.")
        import sys
        sys.exit(1)
    
    config = ModelConfig()
    model = CleanGPT_TE(config).cuda()
    model = model.to(torch.bfloat16)
    
    # Test forward pass
    x = torch.randint(0, config.vocab_size, (2, 128)).cuda()
    fp8_recipe = get_fp8_recipe(config)
    
    print("\nTesting CLEAN implementation...")
    
    # Simple test - no is_first_microbatch complexity
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        logits, loss = model(x, targets=x)
    
    print(f"✓ Clean model test successful!")
    print(f"Loss: {loss.item():.4f}")
    print("\nThis is the ACTUAL fastest implementation for 112M models.")
    print("No complex optimizations that add overhead at this scale.")