"""The inputs: reading the lab's bench sheets and the editors' export, and writing the demo's."""
