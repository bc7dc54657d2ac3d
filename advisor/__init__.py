"""The partition-key advisor: candidate designs measured on the user's documents and workload."""
