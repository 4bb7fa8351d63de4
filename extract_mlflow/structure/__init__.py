"""Document structure: tables (TEDS), reading order, regions (ANLS), section boundaries."""
