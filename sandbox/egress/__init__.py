"""The network profile's way out: the destination policy and the allow-listing proxy.
May import wire/ and the settings modules."""
