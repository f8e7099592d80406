"""What the processes share: the frames they speak (protocol), the messages those frames
carry (messages), and the caps and cuts applied to what crosses to the client. Imports
nothing of the sandbox's."""
