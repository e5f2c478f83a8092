-- Human checkpoints (docs/design.md#complexity-allocation-selection-and-review): a critical workflow waits, idle,
-- until a person approves or
-- rejects it. JSON {"state": "pending" | "approved" | "rejected", "reason": text | null, "at": ms | null};
-- NULL for a workflow that needs no approval.
ALTER TABLE workflows ADD COLUMN checkpoint TEXT;
