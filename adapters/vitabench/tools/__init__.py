"""The VitaBench tool kits: 8 general, 12 delivery, 16 in-store and 30 travel tools."""
