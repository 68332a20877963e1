"""Pure domain logic: plain functions over plain values (dataclasses, Decimal). No framework, no I/O."""
