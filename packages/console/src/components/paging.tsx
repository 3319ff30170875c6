import { Button, Flex } from "@radix-ui/themes";
import { useCallback, useState } from "react";
import type { Pagination } from "../../../../gen/latchkey/v2/common_pb.js";

/** The cursors of the pages seen so far: the current page is the last. */
export function usePages() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const reset = useCallback(() => setCursors([undefined]), []);
  return {
    cursor: cursors[cursors.length - 1],
    cursors,
    setCursors,
    reset,
  };
}

/** "Previous page" and "Next page", from a list's pagination. */
export function Pager({
  pages,
  pagination,
}: {
  pages: ReturnType<typeof usePages>;
  pagination: Pagination | undefined;
}) {
  return (
    <Flex gap="3" mt="3">
      {pages.cursors.length > 1 && (
        <Button variant="soft" onClick={() => pages.setCursors((c) => c.slice(0, -1))}>
          Previous page
        </Button>
      )}
      {pagination?.hasMore && (
        <Button variant="soft" onClick={() => pages.setCursors((c) => [...c, pagination.cursor])}>
          Next page
        </Button>
      )}
    </Flex>
  );
}
