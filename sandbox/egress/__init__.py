"""The network profile's way out: the proxy that applies SANDBOX_NETWORK_ALLOW (parsed by the
settings module network_allow). May import wire/ and the settings modules."""
