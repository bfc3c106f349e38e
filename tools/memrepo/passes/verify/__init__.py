"""The verifier: claims found in memories, the fixed registry of typed probes, stamps."""
