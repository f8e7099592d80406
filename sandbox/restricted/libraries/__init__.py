"""The libraries' doors: one table per library (*_table.py), read by one engine
(policy.POLICY) that the RestrictedPython wall asks. May import the rest of restricted/."""
