"""The fork server, the cloner the children come from, the server's client of them (runner)
and what a child's answer becomes (outcome). May import wire/, the kernel side at the top of
sandbox/, restricted/ (to warm it) and the settings modules."""
