"""The fetch-session slice's trace tools: report and workload."""
