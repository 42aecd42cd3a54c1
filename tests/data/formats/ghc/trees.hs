-- Binary trees, word counts and a sort: a small program with a few cost centres and nested calls.
module Main (main) where

import Data.List (sortBy, foldl')
import qualified Data.Map.Strict as M

data Tree = Leaf | Node Tree Int Tree

make :: Int -> Int -> Tree
make v 0 = Node Leaf v Leaf
make v d = Node (make (2 * v) (d - 1)) v (make (2 * v + 1) (d - 1))

check :: Tree -> Int
check Leaf = 0
check (Node l v r) = v + check l - check r

wordsOf :: Int -> [String]
wordsOf n = [ show (i * 7919 `mod` 1009) | i <- [1 .. n] ]

countWords :: [String] -> M.Map String Int
countWords = foldl' (\m w -> M.insertWith (+) w 1 m) M.empty

{-# NOINLINE fib #-}
fib :: Int -> Integer
fib n = if n < 2 then toInteger n else fib (n - 1) + fib (n - 2)

main :: IO ()
main = do
  let trees = [ check (make i 16) | i <- [1 .. 8] ]
  print (sum trees)
  let counts = countWords (wordsOf 200000)
  print (take 3 (sortBy (\(_, a) (_, b) -> compare b a) (M.toList counts)))
  print (fib 25)
