"""The data-science libraries' doors, as policy tables read by the RestrictedPython wall.
May import the rest of restricted/."""
