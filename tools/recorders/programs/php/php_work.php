<?php
// A small real PHP program for Xdebug's profiler (written for TraceVis3D's recordings):
// recursion (fib, a recursive merge sort), classes (an interface, an abstract class, static
// factories: shapes.php, included), closures (array_map, usort, a memoising closure), string
// functions (str_repeat, strlen, preg_match_all, md5), and json_encode/json_decode.
//
//     php -d xdebug.mode=profile -d xdebug.output_dir=D \
//         -d xdebug.profiler_output_name=cachegrind.out.%p php_work.php [ROUNDS]

require_once __DIR__ . '/shapes.php';

function fib(int $n): int
{
    return $n < 2 ? $n : fib($n - 1) + fib($n - 2);
}

function merge_sort(array $a): array
{
    $n = count($a);
    if ($n <= 1) {
        return $a;
    }
    $left = merge_sort(array_slice($a, 0, intdiv($n, 2)));
    $right = merge_sort(array_slice($a, intdiv($n, 2)));
    $out = [];
    $i = $j = 0;
    while ($i < count($left) && $j < count($right)) {
        $out[] = $left[$i] <= $right[$j] ? $left[$i++] : $right[$j++];
    }
    while ($i < count($left)) {
        $out[] = $left[$i++];
    }
    while ($j < count($right)) {
        $out[] = $right[$j++];
    }
    return $out;
}

class Inventory
{
    private array $items = [];

    public function add(string $name, Shape $shape): void
    {
        $this->items[$name] = $shape;
    }

    public function totalArea(): float
    {
        return array_sum(array_map(fn (Shape $s) => $s->area(), $this->items));
    }

    public function largest(int $k): array
    {
        $names = array_keys($this->items);
        usort($names, function (string $a, string $b): int {
            return $this->items[$b]->area() <=> $this->items[$a]->area();
        });
        return array_slice($names, 0, $k);
    }
}

function text_work(int $seed): int
{
    $text = '';
    for ($i = 0; $i < 500; $i++) {
        $text .= "user$i@host" . ($i % 17) . ".example.org said " . ($i * $seed) . " words\n";
    }
    $n = preg_match_all('/(\w+)@(\w+)\.example\.org said (\d+)/', $text, $m);
    $h = md5(str_repeat($text, 3));
    return $n + strlen($h) + strlen($text);
}

function json_work(int $depth): int
{
    $tree = function (int $d) use (&$tree): array {
        return $d === 0 ? ['v' => $d] : ['v' => $d, 'kids' => [$tree($d - 1), $tree($d - 1), $tree($d - 1)]];
    };
    $doc = json_decode(json_encode($tree($depth)), true);
    $walk = function (array $node) use (&$walk): int {
        $s = $node['v'];
        foreach ($node['kids'] ?? [] as $k) {
            $s += $walk($k);
        }
        return $s;
    };
    return $walk($doc);
}

function main(int $rounds): void
{
    mt_srand(7);
    $inv = new Inventory();
    for ($r = 0; $r < $rounds; $r++) {
        $inv->add("rect$r", Rectangle::make($r + 1, 2 * $r + 1));
        $inv->add("poly$r", RegularPolygon::make(3 + $r % 9, $r + 0.5));
        $data = [];
        for ($i = 0; $i < 600; $i++) {
            $data[] = mt_rand(0, 1000000);
        }
        $sorted = merge_sort($data);
        printf("round %d: fib %d, median %d, text %d, json %d\n", $r, fib(12), $sorted[300], text_work($r + 1),
               json_work(4));
    }
    printf("area %.1f, largest %s\n", $inv->totalArea(), implode(',', $inv->largest(3)));
}

main((int)($argv[1] ?? 4));
