"""rlvr's torch engine worker: a PyTorch + transformers model served over stdin/stdout.

The TypeScript client (src/engines/torch/) spawns `python -m rlvr_worker` and speaks the framed
binary protocol of `protocol.py`. Every formula (losses, advantages, KL) stays in TypeScript; this
package only samples, scores, back-propagates cotangents and steps AdamW.
"""

PROTOCOL_VERSION = 1
__version__ = "0.1.0"
