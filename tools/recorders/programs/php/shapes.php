<?php
// Shapes for php_work.php (included with require_once): an interface, an abstract class,
// two subclasses and a static factory.  Written for TraceVis3D's recordings.

interface Shape
{
    public function area(): float;
}

abstract class Polygon implements Shape
{
    /** @var float[][] */
    protected array $points;

    public function __construct(array $points)
    {
        $this->points = $points;
    }

    public function area(): float
    {
        // the shoelace formula
        $n = count($this->points);
        $sum = 0.0;
        for ($i = 0; $i < $n; $i++) {
            [$x1, $y1] = $this->points[$i];
            [$x2, $y2] = $this->points[($i + 1) % $n];
            $sum += $x1 * $y2 - $x2 * $y1;
        }
        return abs($sum) / 2.0;
    }
}

final class Rectangle extends Polygon
{
    public static function make(float $w, float $h): self
    {
        return new self([[0, 0], [$w, 0], [$w, $h], [0, $h]]);
    }
}

final class RegularPolygon extends Polygon
{
    public static function make(int $sides, float $r): self
    {
        $pts = [];
        for ($k = 0; $k < $sides; $k++) {
            $pts[] = [$r * cos(2 * M_PI * $k / $sides), $r * sin(2 * M_PI * $k / $sides)];
        }
        return new self($pts);
    }
}
