"""What the processes share: the frames they speak, and the caps and cuts applied to what
crosses to the client. Imports nothing of the sandbox's."""
