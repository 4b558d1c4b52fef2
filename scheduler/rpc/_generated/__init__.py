"""Code generated from scheduler/rpc/proto by scripts/generate_proto.py: do not edit."""
