"""What a snippet gets instead of modules refused as a whole (sys, io, os, logging, sqlite3,
unittest, ...): the everyday part, written by us. May import the rest of restricted/."""
